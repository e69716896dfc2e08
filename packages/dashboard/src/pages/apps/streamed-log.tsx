/** A text log read as it is written (a followed `text/plain` answer), shown in a box that keeps its end in view. */
import { useEffect, useRef, useState } from 'react';
import { send } from '../../api.ts';
import { ErrorBanner } from '../../ui.tsx';

/** The most of a log kept on the page: its end, as a terminal's scrollback would. */
const KEEP_CHARS = 200_000;

/** The text at `path` so far, growing while the server writes; read again when `path` changes, stopped on unmount. */
export function useStreamedText(path: string): { text: string; ended: boolean; error: unknown } {
  const [text, setText] = useState('');
  const [ended, setEnded] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const controller = new AbortController();
    setText('');
    setEnded(false);
    setError(null);
    (async () => {
      const response = await send('GET', path, undefined, 'text/plain', controller.signal);
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const chunk = decoder.decode(value, { stream: true });
        setText((before) => (before + chunk).slice(-KEEP_CHARS));
      }
      setEnded(true);
    })().catch((reason: unknown) => {
      if (!controller.signal.aborted) setError(reason);
    });
    return () => controller.abort();
  }, [path]);
  return { text, ended, error };
}

export function StreamedLog({ path, label, empty }: { path: string; label: string; empty: string }) {
  const { text, ended, error } = useStreamedText(path);
  const box = useRef<HTMLPreElement>(null);
  useEffect(() => {
    const el = box.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [text]);
  return (
    <>
      <ErrorBanner error={error} />
      <pre ref={box} className="run-output app-log" aria-label={label} aria-live="off" data-ended={ended ? 'true' : 'false'}>
        {text || empty}
      </pre>
    </>
  );
}
