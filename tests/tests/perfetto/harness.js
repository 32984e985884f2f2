// Drives Perfetto's WebAssembly trace processor (engine_bundle.js + trace_processor.wasm, as
// shipped in Perfetto's UI) over its RPC protocol (protos/perfetto/trace_processor/
// trace_processor.proto): loads ./trace.pftrace, runs the SQL in ./queries.json and POSTs
// {results: [{columns, rows, error}], error} to /result.
'use strict';

// --- protobuf wire format, the few pieces the RPC needs ---
function varint(out, v) {
  v = BigInt(v);
  if (v < 0n) v += 1n << 64n;
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v ? b | 0x80 : b);
  } while (v);
}
function bytesField(out, field, bytes) {
  varint(out, (field << 3) | 2);
  varint(out, bytes.length);
  for (const b of bytes) out.push(b);
}
function varintField(out, field, v) {
  varint(out, field << 3);
  varint(out, v);
}
class Reader {
  constructor(buf) { this.buf = buf; this.pos = 0; }
  done() { return this.pos >= this.buf.length; }
  varint() {
    let v = 0n, shift = 0n;
    for (;;) {
      const b = this.buf[this.pos++];
      v |= BigInt(b & 0x7f) << shift;
      shift += 7n;
      if (!(b & 0x80)) return v;
    }
  }
  // -> [field, wireType, value] (value: BigInt for varints, Uint8Array for the rest)
  next() {
    const key = Number(this.varint());
    const field = key >>> 3, wt = key & 7;
    if (wt === 0) return [field, wt, this.varint()];
    if (wt === 1) { const v = this.buf.subarray(this.pos, this.pos + 8); this.pos += 8; return [field, wt, v]; }
    if (wt === 5) { const v = this.buf.subarray(this.pos, this.pos + 4); this.pos += 4; return [field, wt, v]; }
    if (wt === 2) {
      const n = Number(this.varint());
      const v = this.buf.subarray(this.pos, this.pos + n);
      this.pos += n;
      return [field, wt, v];
    }
    throw new Error('wire type ' + wt);
  }
}
const utf8 = new TextDecoder();
function signed(v) { return v >= 1n << 63n ? v - (1n << 64n) : v; }

// --- the RPC ---
let seq = 0;
let rx = new Uint8Array(0);
let waiting = null;  // resolve(msg) for the next TraceProcessorRpc
const inbox = [];
function request(method, argField, argBytes) {
  const msg = [];
  varintField(msg, 1, ++seq);
  varintField(msg, 2, method);
  if (argField) bytesField(msg, argField, argBytes);
  const framed = [];
  bytesField(framed, 1, msg);
  port.postMessage(new Uint8Array(framed));
}
function onBytes(data) {
  const all = new Uint8Array(rx.length + data.length);
  all.set(rx); all.set(data, rx.length);
  rx = all;
  for (;;) {
    const r = new Reader(rx);
    if (r.done()) break;
    let field, wt, body;
    try { [field, wt, body] = r.next(); } catch (e) { break; }
    if (r.pos > rx.length) break;  // incomplete frame
    rx = rx.slice(r.pos);
    inbox.push(body);
  }
  while (waiting && inbox.length) { const w = waiting; waiting = null; w(inbox.shift()); }
}
function nextMessage() {
  if (inbox.length) return Promise.resolve(inbox.shift());
  return new Promise((res) => { waiting = res; });
}
// One TraceProcessorRpc's fields: {response, fatal, args: {field: bytes}}
function parseRpc(buf) {
  const r = new Reader(buf), out = { args: {} };
  while (!r.done()) {
    const [f, wt, v] = r.next();
    if (f === 3) out.response = Number(v);
    else if (f === 4) out.invalid = Number(v);
    else if (f === 5) out.fatal = utf8.decode(v);
    else if (f > 100) out.args[f] = v;
  }
  if (out.fatal) throw new Error('trace processor: ' + out.fatal);
  if (out.invalid) throw new Error('trace processor: invalid request ' + out.invalid);
  return out;
}
async function append(bytes) {
  request(1, 101, bytes);
  const m = parseRpc(await nextMessage());
  const r = new Reader(m.args[201] || new Uint8Array(0));
  while (!r.done()) { const [f, , v] = r.next(); if (f === 2) throw new Error('append: ' + utf8.decode(v)); }
}
async function finalize() {
  request(2);
  parseRpc(await nextMessage());
}
async function query(sql) {
  const args = [];
  bytesField(args, 1, new TextEncoder().encode(sql));
  request(3, 103, args);
  const res = { columns: [], rows: [], error: null };
  let cells = [];
  for (;;) {
    const m = parseRpc(await nextMessage());
    const r = new Reader(m.args[203] || new Uint8Array(0));
    let last = false;
    while (!r.done()) {
      const [f, , v] = r.next();
      if (f === 1) res.columns.push(utf8.decode(v));
      else if (f === 2) res.error = utf8.decode(v);
      else if (f === 3) {
        const b = new Reader(v);
        let types = [], ints = [], floats = [], strings = [];
        while (!b.done()) {
          const [bf, bwt, bv] = b.next();
          if (bf === 1) { const p = new Reader(bv); while (!p.done()) types.push(Number(p.varint())); }
          else if (bf === 2) { const p = new Reader(bv); while (!p.done()) ints.push(signed(p.varint())); }
          else if (bf === 3) { const dv = new DataView(bv.buffer, bv.byteOffset, bv.length); for (let i = 0; i < bv.length; i += 8) floats.push(dv.getFloat64(i, true)); }
          else if (bf === 5) { strings = utf8.decode(bv).split('\0'); }
          else if (bf === 6) last = last || bv !== 0n;
        }
        let [ii, fi, si] = [0, 0, 0];
        for (const t of types) {
          if (t === 1) cells.push(null);
          else if (t === 2) { const x = ints[ii++]; cells.push(Number.isSafeInteger(Number(x)) ? Number(x) : x.toString()); }
          else if (t === 3) cells.push(floats[fi++]);
          else if (t === 4) cells.push(strings[si++]);
          else cells.push('<blob>');
        }
      }
    }
    if (last || res.error) break;
  }
  const n = Math.max(res.columns.length, 1);
  for (let i = 0; i + n <= cells.length; i += n) res.rows.push(cells.slice(i, i + n));
  return res;
}

let port;
async function main() {
  const worker = new Worker('engine_bundle.js');
  const ch = new MessageChannel();
  worker.postMessage(ch.port2, [ch.port2]);
  port = ch.port1;
  port.onmessage = (e) => onBytes(e.data);
  worker.onerror = (e) => report({ error: 'worker: ' + e.message });
  // The worker takes requests as soon as it has the port, but its WebAssembly module
  // initialises asynchronously and gives no signal: give it time to compile first.
  await new Promise((r) => setTimeout(r, 5000));
  const trace = new Uint8Array(await (await fetch('trace.pftrace')).arrayBuffer());
  const queries = await (await fetch('queries.json')).json();
  for (let off = 0; off < trace.length; off += 1 << 20) await append(trace.subarray(off, off + (1 << 20)));
  await finalize();
  const results = [];
  for (const q of queries) results.push(await query(q));
  await report({ results, bytes: trace.length });
}
async function report(obj) {
  await fetch('/result', { method: 'POST', body: JSON.stringify(obj) });
}
main().catch((e) => report({ error: String(e && e.stack || e) }));
