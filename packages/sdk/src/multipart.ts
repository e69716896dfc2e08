/**
 * A multipart/form-data body sent as it is read, for large uploads from Node.js (`node-request.ts` sends it): the
 * fields, then the file's bytes as `blob.stream()` reads them, with the body's length known up front. Written here
 * because Node.js's own encoder (fetch's, for a FormData) is the one that reads the whole body into memory.
 */

export interface StreamedBody {
  contentType: string;
  /** Bytes in all: the request states its length. */
  length: number;
  /** The body from its first byte (a retry opens it again). */
  open(): ReadableStream<Uint8Array>;
}

/** A name or file name as the HTML standard escapes it in a Content-Disposition header. */
const quote = (value: string) => value.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');

/** `fields` (in order), then `file` named `filename`. */
export function multipartBody(fields: [string, string][], file: { name: string; filename: string; blob: Blob }): StreamedBody {
  const boundary = `----sandboxd${Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('')}`;
  const encoder = new TextEncoder();
  const head = encoder.encode(
    fields.map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`).join('') +
      `--${boundary}\r\nContent-Disposition: form-data; name="${quote(file.name)}"; filename="${quote(file.filename)}"\r\n` +
      `Content-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = encoder.encode(`\r\n--${boundary}--\r\n`);
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: head.length + file.blob.size + tail.length,
    open() {
      let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
      return new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(head);
        },
        async pull(controller) {
          reader ??= file.blob.stream().getReader();
          const next = await reader.read();
          if (next.done) {
            controller.enqueue(tail);
            controller.close();
          } else controller.enqueue(next.value);
        },
        async cancel(reason) {
          await reader?.cancel(reason);
        },
      });
    },
  };
}
