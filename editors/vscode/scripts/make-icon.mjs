// Draws media/icon.png (128x128, the Marketplace icon): two linked nodes on a dark
// rounded square. Deterministic, no image tools needed: `node scripts/make-icon.mjs`.
import { writeFileSync } from "node:fs";
import { deflateSync } from "node:zlib";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SIZE = 128;
const SAMPLES = 4; // supersampling per axis, for smooth edges

function inside(x, y) {
  // rounded square background
  const r = 24;
  const cx = Math.min(Math.max(x, r), SIZE - r);
  const cy = Math.min(Math.max(y, r), SIZE - r);
  if ((x - cx) ** 2 + (y - cy) ** 2 > r * r) return null;
  const ring = (px, py, outer, inner) => {
    const d = Math.hypot(x - px, y - py);
    return d <= outer && d >= inner;
  };
  if (ring(38, 38, 18, 10) || ring(90, 90, 18, 10)) return [0x4f, 0xc3, 0xf7];
  // the tether: a curve between the nodes
  for (let t = 0; t <= 1; t += 0.01) {
    const bx = (1 - t) ** 2 * 50 + 2 * (1 - t) * t * 40 + t * t * 78;
    const by = (1 - t) ** 2 * 50 + 2 * (1 - t) * t * 95 + t * t * 78;
    if (Math.hypot(x - bx, y - by) <= 4) return [0xff, 0xff, 0xff];
  }
  return [0x1e, 0x25, 0x33];
}

const rows = [];
for (let y = 0; y < SIZE; y++) {
  const row = Buffer.alloc(1 + SIZE * 4);
  for (let x = 0; x < SIZE; x++) {
    let r = 0, g = 0, b = 0, a = 0;
    for (let sy = 0; sy < SAMPLES; sy++) {
      for (let sx = 0; sx < SAMPLES; sx++) {
        const c = inside(x + (sx + 0.5) / SAMPLES, y + (sy + 0.5) / SAMPLES);
        if (!c) continue;
        r += c[0]; g += c[1]; b += c[2]; a += 255;
      }
    }
    const n = SAMPLES * SAMPLES;
    const covered = a / 255 || 1;
    row.set([Math.round(r / covered), Math.round(g / covered), Math.round(b / covered), Math.round(a / n)], 1 + x * 4);
  }
  rows.push(row);
}

function chunk(type, data) {
  const body = Buffer.concat([Buffer.from(type), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  return Buffer.concat([len, body, crc]);
}

function crc32(buf) {
  let c = ~0;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c;
}

const header = Buffer.alloc(13);
header.writeUInt32BE(SIZE, 0);
header.writeUInt32BE(SIZE, 4);
header.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk("IHDR", header),
  chunk("IDAT", deflateSync(Buffer.concat(rows))),
  chunk("IEND", Buffer.alloc(0)),
]);
writeFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "media", "icon.png"), png);
