/** Scales an RGB screen image and encodes it as PNG (deflate runs in zlib's native code). */
import { deflateSync } from 'node:zlib';
import type { RgbImage } from './xwd.ts';

/**
 * Scales down by area averaging (every source pixel counts once, so text stays legible at small sizes); a
 * target as large as the source returns it as is.
 */
export function scaleImage(image: RgbImage, width: number, height: number): RgbImage {
  if (width >= image.width && height >= image.height) return image;
  const out = Buffer.alloc(width * height * 3);
  const xRatio = image.width / width;
  const yRatio = image.height / height;
  for (let y = 0; y < height; y++) {
    const y0 = Math.floor(y * yRatio);
    const y1 = Math.max(y0 + 1, Math.floor((y + 1) * yRatio));
    for (let x = 0; x < width; x++) {
      const x0 = Math.floor(x * xRatio);
      const x1 = Math.max(x0 + 1, Math.floor((x + 1) * xRatio));
      let r = 0;
      let g = 0;
      let b = 0;
      for (let sy = y0; sy < y1; sy++) {
        let at = (sy * image.width + x0) * 3;
        for (let sx = x0; sx < x1; sx++, at += 3) {
          r += image.rgb[at]!;
          g += image.rgb[at + 1]!;
          b += image.rgb[at + 2]!;
        }
      }
      const n = (y1 - y0) * (x1 - x0);
      const o = (y * width + x) * 3;
      out[o] = Math.round(r / n);
      out[o + 1] = Math.round(g / n);
      out[o + 2] = Math.round(b / n);
    }
  }
  return { width, height, rgb: out };
}

/** CRC-32 (ISO 3309, as PNG chunks use it); Node 18, the guest's, has no zlib.crc32. */
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * PNG, 8-bit RGB, every row unfiltered, deflated at zlib's fastest level. Written here rather than with pngjs
 * (which the tests use to decode): pngjs makes two more passes over the pixels (colour conversion, filtering)
 * in JavaScript, which measured ~0.5 s per 1280×800 screenshot in a TCG guest; this is one memcpy per row
 * and zlib's native deflate (~110 ms there).
 */
export function encodePng(image: RgbImage): Buffer {
  const stride = image.width * 3;
  const raw = Buffer.allocUnsafe((stride + 1) * image.height);
  for (let y = 0; y < image.height; y++) {
    const at = y * (stride + 1);
    raw[at] = 0; // filter type None
    image.rgb.copy(raw, at + 1, y * stride, (y + 1) * stride);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(image.width, 0);
  header.writeUInt32BE(image.height, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // colour type RGB
  return Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(raw, { level: 1 })), chunk('IEND', Buffer.alloc(0))]);
}
