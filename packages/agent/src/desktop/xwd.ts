/**
 * Reads the screen dump `xwd -root` writes (the X Window Dump format: a big-endian header of 25 CARD32s, the
 * window name, the colormap, then the pixels in the server's byte order) into 8-bit RGB. The small C tool takes
 * ~200 ms per 1280×800 dump in a TCG guest, and keeps an X protocol client out of this service.
 */
export interface RgbImage {
  width: number;
  height: number;
  /** width × height × 3 bytes, rows top to bottom. */
  rgb: Buffer;
}

const HEADER_FIELDS = 25;
const ZPIXMAP = 2;

/** Bit offset and width of a channel mask (0xff0000 → shift 16, 8 bits). */
function maskShape(mask: number): { shift: number; bits: number } {
  if (mask === 0) throw new Error('xwd: a colour mask is zero');
  let shift = 0;
  while (((mask >>> shift) & 1) === 0) shift++;
  let bits = 0;
  while (((mask >>> (shift + bits)) & 1) === 1) bits++;
  return { shift, bits };
}

export function parseXwd(dump: Buffer): RgbImage {
  if (dump.length < HEADER_FIELDS * 4) throw new Error('xwd: the dump is shorter than its header');
  const field = (i: number): number => dump.readUInt32BE(i * 4);
  const headerSize = field(0);
  const [version, format, , width, height] = [field(1), field(2), field(3), field(4), field(5)];
  const byteOrder = field(7); // 0: LSBFirst
  const bitsPerPixel = field(11);
  const bytesPerLine = field(12);
  const masks = [field(14), field(15), field(16)] as const;
  const colormapEntries = field(19);
  if (version !== 7 || format !== ZPIXMAP) throw new Error(`xwd: unsupported dump (version ${version}, format ${format})`);
  if (bitsPerPixel !== 32 && bitsPerPixel !== 24) throw new Error(`xwd: ${bitsPerPixel} bits per pixel is not supported (the desktop runs at depth 24)`);
  const pixelsAt = headerSize + colormapEntries * 12;
  if (dump.length < pixelsAt + bytesPerLine * height) throw new Error('xwd: the dump is shorter than its pixels');

  const bytesPerPixel = bitsPerPixel / 8;
  const [red, green, blue] = masks.map(maskShape) as [ReturnType<typeof maskShape>, ReturnType<typeof maskShape>, ReturnType<typeof maskShape>];
  const rgb = Buffer.allocUnsafe(width * height * 3);
  // The usual case (8-bit channels at byte boundaries) copies bytes; anything else goes through the masks.
  const byteAligned = [red, green, blue].every((c) => c.bits === 8 && c.shift % 8 === 0);
  const byteOf = (shift: number): number => (byteOrder === 0 ? shift / 8 : bytesPerPixel - 1 - shift / 8);
  let out = 0;
  if (byteAligned) {
    const [r, g, b] = [byteOf(red.shift), byteOf(green.shift), byteOf(blue.shift)];
    for (let y = 0; y < height; y++) {
      let at = pixelsAt + y * bytesPerLine;
      for (let x = 0; x < width; x++, at += bytesPerPixel) {
        rgb[out++] = dump[at + r]!;
        rgb[out++] = dump[at + g]!;
        rgb[out++] = dump[at + b]!;
      }
    }
    return { width, height, rgb };
  }
  const scale = (value: number, c: { shift: number; bits: number }): number =>
    Math.round((((value >>> c.shift) & ((1 << c.bits) - 1)) * 255) / ((1 << c.bits) - 1));
  for (let y = 0; y < height; y++) {
    let at = pixelsAt + y * bytesPerLine;
    for (let x = 0; x < width; x++, at += bytesPerPixel) {
      let value = 0;
      for (let i = 0; i < bytesPerPixel; i++) value |= dump[at + i]! << (8 * (byteOrder === 0 ? i : bytesPerPixel - 1 - i));
      rgb[out++] = scale(value, red);
      rgb[out++] = scale(value, green);
      rgb[out++] = scale(value, blue);
    }
  }
  return { width, height, rgb };
}
