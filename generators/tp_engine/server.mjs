// Perfetto's trace processor, compiled to WebAssembly (the build the Perfetto UI
// runs in a web worker), served over the same HTTP protocol as
// `trace_processor_shell -D --http-port PORT`, so that the unmodified `perfetto`
// Python API can talk to it.
//
// Usage:
//   node server.mjs --dist DIR [--port N | -D --http-port N] [--no-ftrace-raw]
//                   [--add-sql-package PATH[@NAME]]... [--max-memory-mb N]
//                   [--wasm auto|64|32] [--exit-on-stdin-eof]
//   node server.mjs --dist DIR --version
//
// DIR is the folder holding engine_bundle.js, trace_processor.wasm and
// trace_processor_memory64.wasm. Once the HTTP server listens on loopback it
// prints one line to stdout: `listening 127.0.0.1:PORT <json>`; everything the
// engine itself prints goes to stderr.

// Built-in modules through process.getBuiltinModule (Node 20.16+): static ESM
// imports of them cost Node's module loader some 30 ms of start-up.
const builtin = async (name) =>
  process.getBuiltinModule ? process.getBuiltinModule(name) : (await import(name)).default;
const fs = await builtin("node:fs");
const http = await builtin("node:http");
const path = await builtin("node:path");
const vm = await builtin("node:vm");
const { pathToFileURL } = await builtin("node:url");

// ---------------------------------------------------------------- arguments

function parseArgs(argv) {
  const opts = {
    dist: null,
    port: 0,
    ftraceRaw: true,
    packages: [],
    maxMemoryMb: 0,
    wasm: "auto",
    version: false,
    exitOnStdinEof: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) fail(`missing value after ${a}`);
      return argv[++i];
    };
    if (a === "--dist") opts.dist = next();
    else if (a === "--port" || a === "--http-port") opts.port = Number(next());
    else if (a === "-D" || a === "--httpd") continue;
    else if (a === "--no-ftrace-raw") opts.ftraceRaw = false;
    else if (a === "--add-sql-package") opts.packages.push(next());
    else if (a === "--max-memory-mb") opts.maxMemoryMb = Number(next());
    else if (a === "--wasm") opts.wasm = next();
    else if (a === "--version" || a === "-v") opts.version = true;
    else if (a === "--exit-on-stdin-eof") opts.exitOnStdinEof = true;
    else fail(`unknown argument: ${a}`);
  }
  if (!opts.dist) fail("--dist DIR is required");
  if (!["auto", "64", "32"].includes(opts.wasm)) fail(`bad --wasm value: ${opts.wasm}`);
  return opts;
}

function fail(msg) {
  process.stderr.write(`tp-engine: ${msg}\n`);
  process.exit(2);
}

const opts = parseArgs(process.argv.slice(2));
const distDir = path.resolve(opts.dist);
const bundlePath = path.join(distDir, "engine_bundle.js");
if (!fs.existsSync(bundlePath)) fail(`no engine_bundle.js in ${distDir}`);
const engineVersion = path.basename(distDir);

// ------------------------------------------------------- memory accounting

// Emscripten grows the heap from JavaScript (WebAssembly.Memory#grow), so
// watching that call gives the exact heap size, and refusing it is how an
// out-of-memory condition is produced on purpose (--max-memory-mb).
const memState = { bytes: 0, peakBytes: 0, refusedGrowBytes: 0 };
const capBytes = opts.maxMemoryMb > 0 ? opts.maxMemoryMb * 1024 * 1024 : 0;
const realGrow = WebAssembly.Memory.prototype.grow;
WebAssembly.Memory.prototype.grow = function (delta) {
  const current = Number(this.buffer.byteLength);
  const wanted = current + Number(delta) * 65536;
  if (capBytes && wanted > capBytes) {
    memState.refusedGrowBytes = wanted;
    throw new RangeError(`memory cap of ${opts.maxMemoryMb} MiB reached (wanted ${wanted} bytes)`);
  }
  const r = realGrow.call(this, delta);
  noteMemory(this);
  return r;
};
function noteMemory(mem) {
  memState.bytes = Number(mem.buffer.byteLength);
  memState.peakBytes = Math.max(memState.peakBytes, memState.bytes);
}

// --------------------------------------------- pretend to be a web worker

class FileXMLHttpRequest {
  constructor() {
    this.status = 0;
    this.response = null;
    this.responseType = "";
    this._url = null;
  }
  open(_method, url) {
    this._url = url;
  }
  setRequestHeader() {}
  overrideMimeType() {}
  send() {
    let p = String(this._url);
    if (p.startsWith("file:")) p = new URL(p).pathname;
    else p = path.resolve(distDir, p);
    const buf = fs.readFileSync(p);
    this.response = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    this.status = 200;
    loadedWasm = path.basename(p);
  }
}

let loadedWasm = null;
let wasmMemory = null;
const realProcess = globalThis.process;
const log = (...a) => realProcess.stderr.write(a.map(String).join(" ") + "\n");
// stdout carries only the "listening" line; the engine's own output goes to stderr.
console.log = console.info = console.debug = log;

function loadEngine() {
  const saved = {};
  const setGlobal = (k, v) => {
    saved[k] = Object.getOwnPropertyDescriptor(globalThis, k);
    Object.defineProperty(globalThis, k, { value: v, configurable: true, writable: true });
  };
  const realModule = WebAssembly.Module;
  const realInstance = WebAssembly.Instance;
  WebAssembly.Instance = function (mod, imports) {
    const inst = new realInstance(mod, imports);
    for (const v of Object.values(inst.exports)) if (v instanceof WebAssembly.Memory) wasmMemory = v;
    return inst;
  };
  setGlobal("self", globalThis);
  setGlobal("location", { href: pathToFileURL(bundlePath).href });
  setGlobal("WorkerGlobalScope", class WorkerGlobalScope {});
  setGlobal("XMLHttpRequest", FileXMLHttpRequest);
  setGlobal("process", undefined);
  if (opts.wasm === "32") {
    // The bundle picks the memory64 build when a tiny memory64 module
    // validates; make that probe fail to get the 32-bit build.
    WebAssembly.Module = function (bytes, ...rest) {
      if (bytes && bytes.length !== undefined && bytes.length < 64) throw new Error("no memory64");
      return new realModule(bytes, ...rest);
    };
  }
  try {
    vm.runInThisContext(fs.readFileSync(bundlePath, "utf8"), { filename: bundlePath });
  } finally {
    WebAssembly.Module = realModule;
    WebAssembly.Instance = realInstance;
    for (const k of ["process"]) {
      if (saved[k]) Object.defineProperty(globalThis, k, saved[k]);
      else delete globalThis[k];
    }
  }
  if (typeof globalThis.onmessage !== "function") throw new Error("engine bundle did not install onmessage");
  const port = {
    onmessage: null,
    postMessage(data) {
      inbox.push(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    },
  };
  globalThis.onmessage({ data: port });
  return port;
}

// ------------------------------------------------------------ protobuf bits

function varint(n) {
  const out = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return Buffer.from(out);
}
const tag = (field, wire) => varint((field << 3) | wire);
const fVarint = (field, n) => Buffer.concat([tag(field, 0), varint(n)]);
const fBytes = (field, buf) => Buffer.concat([tag(field, 2), varint(buf.length), buf]);
const fString = (field, s) => fBytes(field, Buffer.from(s, "utf8"));

function readVarint(buf, pos) {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (pos >= buf.length) return null;
    const b = buf[pos++];
    result |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
    shift += 7n;
  }
  return [result, pos];
}

// Returns [{field, wire, value}] for a complete message.
function decodeFields(buf) {
  const out = [];
  let pos = 0;
  while (pos < buf.length) {
    const [key, p1] = readVarint(buf, pos);
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    pos = p1;
    if (wire === 0) {
      const [v, p2] = readVarint(buf, pos);
      out.push({ field, wire, value: v });
      pos = p2;
    } else if (wire === 2) {
      const [len, p2] = readVarint(buf, pos);
      const end = p2 + Number(len);
      out.push({ field, wire, value: buf.subarray(p2, end) });
      pos = end;
    } else if (wire === 1) {
      pos += 8;
    } else if (wire === 5) {
      pos += 4;
    } else {
      throw new Error(`unsupported wire type ${wire}`);
    }
  }
  return out;
}

// ------------------------------------------------------------------- RPC

const M = {
  APPEND: 1,
  FINALIZE: 2,
  QUERY: 3,
  COMPUTE_METRIC: 5,
  RESTORE_INITIAL_TABLES: 7,
  ENABLE_METATRACE: 8,
  DISABLE_AND_READ_METATRACE: 9,
  STATUS: 10,
  RESET: 11,
  REGISTER_SQL_PACKAGE: 13,
  SUMMARIZE: 15,
};
const MAX_APPEND = 16 * 1024 * 1024;

let port = null;
let inbox = [];
let seq = 0;
let fatal = null; // set once the engine has crashed; it is never used again
let finalizeError = null;

// Sends one request and returns the fields of every reply. The engine runs
// synchronously: all replies to a request arrive before the call returns.
function rpc(method, argField, argBytes) {
  if (fatal) throw new EngineDead(fatal);
  seq += 1;
  const parts = [fVarint(1, seq), fVarint(2, method)];
  if (argField) parts.push(fBytes(argField, argBytes ?? Buffer.alloc(0)));
  const msg = Buffer.concat(parts);
  const frame = Buffer.concat([Buffer.from([0x0a]), varint(msg.length), msg]);
  inbox = [];
  try {
    port.onmessage({ data: new Uint8Array(frame.buffer, frame.byteOffset, frame.byteLength) });
  } catch (e) {
    fatal = describeCrash(e);
    throw new EngineDead(fatal);
  }
  const replies = [];
  let stream = Buffer.concat(inbox);
  inbox = [];
  let pos = 0;
  while (pos < stream.length) {
    if (stream[pos] !== 0x0a) throw new Error(`bad reply framing at byte ${pos}`);
    const r = readVarint(stream, pos + 1);
    if (!r) throw new Error("truncated reply");
    const end = r[1] + Number(r[0]);
    if (end > stream.length) throw new Error("truncated reply");
    replies.push(decodeFields(stream.subarray(r[1], end)));
    pos = end;
  }
  stream = null;
  const results = new Map();
  for (const fields of replies) {
    for (const { field, value } of fields) {
      if (field === 5) {
        fatal = `engine fatal error: ${value.toString("utf8")}`;
        throw new EngineDead(fatal);
      }
      if (field === 4) throw new Error(`engine rejected request (method ${method})`);
      if (field >= 200) {
        if (!results.has(field)) results.set(field, []);
        results.get(field).push(value);
      }
    }
  }
  return results;
}

class EngineDead extends Error {}

function describeCrash(e) {
  const text = String(e && e.message ? e.message : e);
  const oom =
    memState.refusedGrowBytes > 0 ||
    /OOM|out of memory|Cannot enlarge memory|bad_alloc|Aborted\(\)|memory access out of bounds/i.test(text);
  const head = text.split("\n").find((l) => l.trim()) ?? "unknown error";
  if (oom) {
    return (
      `engine ran out of memory (heap ${mib(memState.bytes)} MiB` +
      (capBytes ? `, cap ${opts.maxMemoryMb} MiB` : "") +
      `): ${head}`
    );
  }
  return `engine crashed: ${head}`;
}
const mib = (b) => Math.round(b / 1048576);

function resultBytes(results, field) {
  const chunks = results.get(field) ?? [];
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

// --------------------------------------------------------- SQL packages

function readPackage(spec) {
  const at = spec.lastIndexOf("@");
  const dir = path.resolve(at > 0 ? spec.slice(0, at) : spec);
  const name = at > 0 ? spec.slice(at + 1) : path.basename(dir);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new Error(`SQL package folder not found: ${dir}`);
  }
  const modules = [];
  const walk = (d, prefix) => {
    for (const ent of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(d, ent.name);
      if (ent.isDirectory()) walk(p, `${prefix}${ent.name}.`);
      else if (ent.name.endsWith(".sql")) {
        modules.push({ name: `${prefix}${ent.name.slice(0, -4)}`, sql: fs.readFileSync(p, "utf8") });
      }
    }
  };
  walk(dir, `${name}.`);
  return { name, dir, modules };
}

function registerPackages() {
  for (const spec of opts.packages) {
    const pkg = readPackage(spec);
    const mods = pkg.modules.map((m) => fBytes(2, Buffer.concat([fString(1, m.name), fString(2, m.sql)])));
    const args = Buffer.concat([fString(1, pkg.name), ...mods, fVarint(3, 1)]);
    const res = rpc(M.REGISTER_SQL_PACKAGE, 108, args);
    const err = errorField(resultBytes(res, 211));
    if (err) throw new Error(`registering SQL package ${pkg.name} (${pkg.dir}): ${err}`);
  }
}

function errorField(buf, field = 1) {
  if (!buf || !buf.length) return null;
  for (const f of decodeFields(buf)) if (f.field === field && f.wire === 2) return f.value.toString("utf8");
  return null;
}

// The engine itself starts a fresh trace processor instance (with the config
// of the last RESET) when data arrives after a finished trace; that instance
// has no SQL packages, so they are registered again after the first append.
let registerAfterAppend = false;
let eofSeen = false;
let currentFtraceRaw = null;

function resetEngine(ftraceRaw) {
  finalizeError = null;
  if (eofSeen && ftraceRaw === currentFtraceRaw) {
    // The next /parse resets the engine anyway: resetting here too would
    // build a trace processor instance (the costly part) twice.
    eofSeen = false;
    registerAfterAppend = true;
    return;
  }
  rpc(M.RESET, 107, fVarint(2, ftraceRaw ? 1 : 0));
  currentFtraceRaw = ftraceRaw;
  eofSeen = false;
  registerPackages();
  registerAfterAppend = false;
}

// ------------------------------------------------------------------ HTTP

const routes = {
  "/status": (body) => resultBytes(rpc(M.STATUS), 210),
  "/parse": (body) => {
    let total = 0n;
    let last = Buffer.alloc(0);
    for (let off = 0; off < body.length || off === 0; off += MAX_APPEND) {
      const res = rpc(M.APPEND, 101, body.subarray(off, off + MAX_APPEND));
      last = resultBytes(res, 201);
      const err = errorField(last, 2);
      if (err) return last;
      for (const f of decodeFields(last)) if (f.field === 1) total += f.value;
      if (registerAfterAppend) {
        registerAfterAppend = false;
        registerPackages();
      }
      if (body.length === 0) break;
    }
    return Buffer.concat([fVarint(1, total)]);
  },
  "/notify_eof": () => {
    const out = resultBytes(rpc(M.FINALIZE), 212);
    eofSeen = true;
    finalizeError = errorField(out);
    return out;
  },
  "/query": (body) => resultBytes(rpc(M.QUERY, 103, body), 203),
  "/compute_metric": (body) => resultBytes(rpc(M.COMPUTE_METRIC, 105, body), 205),
  "/trace_summary": (body) => resultBytes(rpc(M.SUMMARIZE, 110, body), 214),
  "/restore_initial_tables": () => (rpc(M.RESTORE_INITIAL_TABLES), Buffer.alloc(0)),
  "/enable_metatrace": (body) => (rpc(M.ENABLE_METATRACE, 106, body), Buffer.alloc(0)),
  "/disable_and_read_metatrace": () => resultBytes(rpc(M.DISABLE_AND_READ_METATRACE), 209),
};

// Error replies in the shape each endpoint's caller expects, so that the
// Python API raises an exception carrying the message.
const errorReplies = {
  "/parse": (m) => fString(2, m),
  "/query": (m) => fString(2, m),
  "/compute_metric": (m) => fString(1, m),
  "/trace_summary": (m) => fString(1, m),
  "/disable_and_read_metatrace": (m) => fString(2, m),
  "/notify_eof": (m) => fString(1, m),
};

function stateJson() {
  return {
    engine: "wasm-node",
    version: engineVersion,
    wasm: loadedWasm,
    node: realProcess.version,
    pid: realProcess.pid,
    heap_bytes: memState.bytes,
    peak_heap_bytes: memState.peakBytes,
    max_memory_mb: opts.maxMemoryMb || null,
    fatal,
    finalize_error: finalizeError,
    rss_bytes: realProcess.memoryUsage.rss(),
  };
}

function handle(req, res, body) {
  const url = new URL(req.url, "http://x");
  const route = url.pathname;
  const send = (code, type, data) => {
    res.writeHead(code, { "Content-Type": type, "Content-Length": data.length });
    res.end(data);
  };
  if (route === "/_guide/state") return send(200, "application/json", Buffer.from(JSON.stringify(stateJson())));
  if (route === "/_guide/reset") {
    try {
      const args = body.length ? JSON.parse(body.toString("utf8")) : {};
      resetEngine(Boolean(args.ftrace_raw ?? opts.ftraceRaw));
      return send(200, "application/json", Buffer.from(JSON.stringify(stateJson())));
    } catch (e) {
      return send(500, "text/plain", Buffer.from(String(e.message ?? e)));
    }
  }
  if (route === "/export") {
    return send(
      501,
      "text/plain",
      Buffer.from(`export is not supported by the WebAssembly trace processor (Perfetto ${engineVersion})`),
    );
  }
  const fn = routes[route];
  if (!fn) return send(404, "text/plain", Buffer.from(`unknown endpoint ${route}`));
  try {
    return send(200, "application/x-protobuf", fn(body));
  } catch (e) {
    const msg = String(e.message ?? e);
    if (!(e instanceof EngineDead)) log(`tp-engine: ${route}: ${e.stack ?? msg}`);
    const shape = errorReplies[route];
    if (shape) return send(200, "application/x-protobuf", shape(msg));
    return send(500, "text/plain", Buffer.from(msg));
  }
}

// ------------------------------------------------------------------ main

async function main() {
  if (opts.version) {
    realProcess.stdout.write(`Perfetto ${engineVersion} (WebAssembly, Node ${realProcess.version})\n`);
    return;
  }
  port = loadEngine();
  // The bridge finishes initialising in a promise callback; let it run.
  await new Promise((r) => setImmediate(r));
  if (wasmMemory) noteMemory(wasmMemory);
  if (opts.ftraceRaw) {
    // The bridge has just built a trace processor with the default config, which
    // ingests ftrace into the raw table: that is what was asked for, and a RESET
    // would only build the same instance again (a quarter of a second).
    currentFtraceRaw = true;
    registerPackages();
  } else {
    resetEngine(false);
  }
  const status = decodeFields(resultBytes(rpc(M.STATUS), 210));
  const hv = status.find((f) => f.field === 2);
  const humanVersion = hv ? hv.value.toString("utf8") : engineVersion;

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => handle(req, res, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
  });
  // The Python client keeps one connection open for the whole session and may
  // sit idle between calls for a long time: never time it out.
  server.keepAliveTimeout = 0;
  server.headersTimeout = 0;
  server.requestTimeout = 0;
  server.timeout = 0;
  server.listen(opts.port, "127.0.0.1", () => {
    const addr = server.address();
    const info = { version: humanVersion, wasm: loadedWasm, node: realProcess.version, pid: realProcess.pid };
    realProcess.stdout.write(`listening ${addr.address}:${addr.port} ${JSON.stringify(info)}\n`);
  });
  server.on("error", (e) => fail(`cannot listen: ${e.message}`));
  if (opts.exitOnStdinEof) {
    realProcess.stdin.on("data", () => {});
    realProcess.stdin.on("end", () => realProcess.exit(0));
    realProcess.stdin.on("error", () => realProcess.exit(0));
  }
}

main().catch((e) => fail(e.stack ?? String(e)));
