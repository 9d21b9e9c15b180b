/*
 * "Check your trace in your browser": the reader picks a Kineto trace (.json or .json.gz, or
 * drops it on the page); this script reads it locally, opens the Perfetto UI with startup
 * commands built from the doctor's detectors (the plan the site build wrote into the page, see
 * generators/doctor/browser.py) and hands the trace over with the UI's postMessage protocol.
 * The trace goes to the Perfetto UI window only; nothing is sent anywhere else. Messages are in
 * the page's language: Japanese where <html lang> starts with "ja", else English.
 *
 * Markup (emitted by the site build):
 *   <div class="pg-doctor-browser" data-perfetto-origin="..." data-guide-root="../">
 *     (a JSON script element of class pg-doctor-browser__plan: the plan)
 *     <input type="file" class="pg-doctor-browser__file"> ... <p class="pg-doctor-browser__status">
 *   </div>
 */
(function () {
  "use strict";

  /*
   * What the importer reads without a word, counted in the file's bytes: the rules of
   * generators/doctor/trust.py's check_file, mirrored here (its comments say why each). The
   * page only counts; the trust tab's query (generators/doctor/browser.py) holds the lines'
   * wording and reads the counts from the table fileCheckTableSql makes.
   */
  var CHECK_CHUNK = 8 << 20;
  /** Bytes as text, one character per byte (a single-byte encoding), for the byte patterns. */
  var BYTES = new TextDecoder("latin1");
  var STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });
  /** Ids written with 19 digits or more: the only ones that may not fit in a signed 64-bit
   * integer (trust.py's _LONG_IDS); the key is read back from the bytes before a match. */
  var LONG_IDS = [
    { pattern: /id": ?"?(-?[0-9]{19,})/g, suffix: "id" },
    { pattern: /correlation": ?"?(-?[0-9]{19,})/g, suffix: "correlation" }
  ];
  var INT64_MAX = "9223372036854775807";

  function occurrences(text, what) {
    var n = 0;
    for (var at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + what.length)) n++;
    return n;
  }

  /** Whether a run of digits (with its sign) lies outside a signed 64-bit integer. */
  function overflows(digits) {
    var negative = digits[0] === "-";
    var magnitude = digits.replace(/^-/, "").replace(/^0+/, "");
    var limit = negative ? "9223372036854775808" : INT64_MAX;
    return magnitude.length > limit.length || (magnitude.length === limit.length && magnitude > limit);
  }

  /** Bytes that are not part of a well-formed UTF-8 sequence (what Python's decoder leaves
   * out with errors="ignore"). */
  function invalidUtf8(bytes) {
    try {
      STRICT_UTF8.decode(bytes);
      return 0;
    } catch (err) {
      /* count them below */
    }
    var bad = 0;
    for (var i = 0; i < bytes.length; ) {
      var c = bytes[i];
      if (c < 0x80) {
        i++;
        continue;
      }
      var need = 0, lo = 0x80, hi = 0xbf;
      if (c >= 0xc2 && c <= 0xdf) need = 1;
      else if (c >= 0xe0 && c <= 0xef) {
        need = 2;
        if (c === 0xe0) lo = 0xa0;
        else if (c === 0xed) hi = 0x9f;
      } else if (c >= 0xf0 && c <= 0xf4) {
        need = 3;
        if (c === 0xf0) lo = 0x90;
        else if (c === 0xf4) hi = 0x8f;
      }
      var ok = need > 0;
      for (var k = 1; ok && k <= need; k++) {
        var d = bytes[i + k];
        ok = d !== undefined && d >= (k === 1 ? lo : 0x80) && d <= (k === 1 ? hi : 0xbf);
      }
      if (ok) i += need + 1;
      else {
        bad++;
        i++;
      }
    }
    return bad;
  }

  /** trust.py's _check_block: one block of the file, cut after a "}". */
  function checkBlock(bytes, out) {
    var text = BYTES.decode(bytes);
    out.events += occurrences(text, '"ph":');
    out.pids += occurrences(text, '"pid":');
    out.tids += occurrences(text, '"tid":');
    out.invalidUtf8Bytes += invalidUtf8(bytes);
    LONG_IDS.forEach(function (id) {
      id.pattern.lastIndex = 0;
      for (var m = id.pattern.exec(text); m; m = id.pattern.exec(text)) {
        if (!overflows(m[1])) continue;
        var quote = m.index > 0 ? text.lastIndexOf('"', m.index - 1) : -1;
        if (quote < Math.max(0, m.index - 40)) quote = -1;
        var key = (quote >= 0 ? text.slice(quote + 1, m.index) : "") + id.suffix;
        if (!(key in out.overflowing)) out.overflowing[key] = 0;
        out.overflowing[key]++;
      }
    });
  }

  /**
   * trust.py's _check_events: each JSON object with at most one level of objects inside it
   * (an event and its args), found left to right as its regular expression finds them; an
   * event states its own pid and tid outside its args. Returns where an object that runs past
   * the text begins (the rest is carried to the next block), or the text's length.
   */
  function checkEvents(text, out, last) {
    var i = 0;
    for (;;) {
      var start = text.indexOf("{", i);
      if (start < 0) return text.length;
      var depth = 1, end = -1, j = start + 1;
      for (; j < text.length; j++) {
        var c = text.charCodeAt(j);
        if (c === 123 && ++depth === 3) break;
        if (c === 125 && --depth === 0) {
          end = j + 1;
          break;
        }
      }
      if (end < 0) {
        if (j >= text.length && !last) return start;
        i = start + 1; // no object starts here: try the next brace
        continue;
      }
      var own = text.slice(start + 1, end - 1).replace(/\{[^{}]*\}/g, "");
      if (own.indexOf('"ph":') >= 0) {
        var pids = occurrences(own, '"pid":'), tids = occurrences(own, '"tid":');
        if (!(pids && tids)) out.withoutPidOrTid++;
        if (pids > 1 || tids > 1) out.pidOrTidTwice++;
      }
      i = end;
    }
  }

  /** The file's bytes, inflated when it is gzip, to onBlock in blocks of about CHECK_CHUNK. */
  function eachBlock(buffer, onBlock) {
    var bytes = new Uint8Array(buffer);
    if (!(bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b)) {
      for (var at = 0; at < bytes.length; at += CHECK_CHUNK) onBlock(bytes.subarray(at, at + CHECK_CHUNK));
      return Promise.resolve();
    }
    var reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip")).getReader();
    var chunks = [];
    var size = 0;
    function flush() {
      if (size) onBlock(concat(chunks, size));
      chunks = [];
      size = 0;
    }
    function pump() {
      return reader.read().then(function (step) {
        if (step.done) return flush();
        chunks.push(step.value);
        size += step.value.length;
        if (size >= CHECK_CHUNK) flush();
        return pump();
      });
    }
    return pump();
  }

  function joined(a, b) {
    if (!a.length) return b;
    var out = new Uint8Array(a.length + b.length);
    out.set(a, 0);
    out.set(b, a.length);
    return out;
  }

  /** The file checks' counts for the trace in ``buffer`` (never rejects: a file that cannot be
   * read to the end says so in ``error``, the counts partial). */
  function fileCheck(buffer) {
    var out = {
      events: 0, pids: 0, tids: 0, withoutPidOrTid: 0, pidOrTidTwice: 0,
      overflowing: {}, invalidUtf8Bytes: 0, error: null
    };
    var carry = new Uint8Array(0);
    return eachBlock(buffer, function (block) {
      // Cut after the last "}", which no counted pattern and no multi-byte character holds.
      var data = joined(carry, block);
      var cut = data.lastIndexOf(125) + 1;
      if (cut === 0 && data.length < 4 * CHECK_CHUNK) {
        carry = data;
        return;
      }
      cut = cut || data.length;
      checkBlock(data.subarray(0, cut), out);
      carry = data.slice(cut);
    })
      .then(function () {
        if (carry.length) checkBlock(carry, out);
        if (out.pids === out.events && out.tids === out.events) return;
        // Only where pid or tid keys are not one per event: the file again, event by event.
        var rest = "";
        return eachBlock(buffer, function (block) {
          var text = rest + BYTES.decode(block);
          rest = text.slice(checkEvents(text, out, false));
        }).then(function () {
          checkEvents(rest, out, true);
        });
      })
      .catch(function (err) {
        out.error = String((err && err.message) || err || "Error").slice(0, 200);
      })
      .then(function () {
        return out;
      });
  }

  /** The ids-overflow line's "by key" list (trust_lines.overflow_keys): most first. */
  function overflowKeys(byKey) {
    return Object.keys(byKey)
      .map(function (k, i) { return [k, byKey[k], i]; })
      .sort(function (a, b) { return b[1] - a[1] || a[2] - b[2]; })
      .map(function (kv) { return kv[0] + ": " + kv[1]; })
      .join(", ");
  }

  /** The JSON object that opens at ``start`` in ``text`` (strings skipped), or null. */
  function objectAt(text, start) {
    var depth = 0;
    var inString = false;
    for (var i = start; i < text.length; i++) {
      var c = text[i];
      if (inString) {
        if (c === "\\") i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]") {
        if (--depth === 0) {
          try {
            return JSON.parse(text.slice(start, i + 1));
          } catch (err) {
            return null;
          }
        }
      }
    }
    return null;
  }

  /** The world size of the trace's distributedInfo, in its opening, as trust.py's world_size
   * reads it (null: none stated). */
  function worldSize(text) {
    var head = text.slice(0, 1 << 16);
    var m = /"distributedInfo": ?\{/.exec(head);
    if (!m) return null;
    var info = objectAt(head, m.index + m[0].length - 1);
    if (!info || typeof info !== "object" || Array.isArray(info)) {
      var found = /"distributedInfo": ?\{[^{}]{0,1000}?"world_size": ?([0-9]{1,9})/.exec(head);
      return found ? Number(found[1]) : null;
    }
    var value = info.world_size;
    return typeof value === "number" && Math.floor(value) === value ? value : null;
  }

  function sqlText(value) {
    return "'" + String(value).replace(/'/g, "''") + "'";
  }

  function sqlInt(value) {
    return typeof value === "number" && isFinite(value) ? String(Math.trunc(value)) : "NULL";
  }

  /** The table generators/doctor/browser.py's file_check_table_sql makes from the command
   * line's reading of the file: the counts quoted, never spliced. */
  function fileCheckTableSql(checked, ranks) {
    var overflowing = 0;
    Object.keys(checked.overflowing).forEach(function (k) { overflowing += checked.overflowing[k]; });
    return (
      "CREATE PERFETTO TABLE guide_trace_file_check(overflowing LONG, overflow_keys STRING, " +
      "without_pid_or_tid LONG, pid_or_tid_twice LONG, invalid_utf8_bytes LONG, error STRING, " +
      "world_size LONG) AS SELECT " + sqlInt(overflowing) + " AS overflowing, " +
      sqlText(overflowKeys(checked.overflowing).slice(0, 2000)) + " AS overflow_keys, " +
      sqlInt(checked.withoutPidOrTid) + " AS without_pid_or_tid, " +
      sqlInt(checked.pidOrTidTwice) + " AS pid_or_tid_twice, " +
      sqlInt(checked.invalidUtf8Bytes) + " AS invalid_utf8_bytes, " +
      (checked.error === null ? "NULL" : sqlText(checked.error)) + " AS error, " +
      sqlInt(ranks) + " AS world_size;"
    );
  }

  function concat(chunks, size) {
    var out = new Uint8Array(size);
    var at = 0;
    chunks.forEach(function (c) {
      out.set(c, at);
      at += c.length;
    });
    return out;
  }

  if (typeof window === "undefined") {
    // Under Node, for the tests that compare this scan with the command line's.
    if (typeof module === "object" && module.exports) {
      module.exports = { fileCheck: fileCheck, worldSize: worldSize, fileCheckTableSql: fileCheckTableSql };
    }
    return;
  }

  if (window.__pgDoctorBrowserInstalled) {
    return;
  }
  window.__pgDoctorBrowserInstalled = true;

  var ROOT_TOKEN = "@@GUIDE_ROOT@@/";
  /** Chromium refuses longer URLs; past this the tracks are left out (the summary stays). */
  var URL_LIMIT = 2000000;
  var HEADER_BYTES = 4 << 20;
  var PING_TIMEOUT_MS = 20000;
  var JA = /^ja\b/i.test(document.documentElement.lang || "");

  /** A message in the page's language: each English text beside its Japanese. */
  function t(en, ja) {
    return JA ? ja : en;
  }

  function setStatus(widget, state, text) {
    var status = widget.querySelector(".pg-doctor-browser__status");
    status.textContent = text;
    status.hidden = false;
    widget.setAttribute("data-state", state);
  }

  /** The first bytes of the trace as text, inflated when it is gzip. */
  function headerText(buffer) {
    var bytes = new Uint8Array(buffer);
    if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
      if (typeof DecompressionStream === "undefined") {
        return Promise.reject(new Error(t(
          "this browser cannot read .gz files; unpack the trace first",
          "このブラウザは .gz ファイルを読めません。先にトレースを展開してください"
        )));
      }
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      var reader = stream.getReader();
      var chunks = [];
      var size = 0;
      var pump = function () {
        return reader.read().then(function (step) {
          if (step.done || size >= HEADER_BYTES) {
            reader.cancel().catch(function () {});
            return;
          }
          chunks.push(step.value);
          size += step.value.length;
          return pump();
        });
      };
      return pump()
        .then(function () {
          return new TextDecoder().decode(concat(chunks, size));
        })
        .catch(function () {
          throw new Error(t(
            "the file is not valid gzip (corrupt or truncated)",
            "ファイルが正しい gzip ではありません（壊れているか、途中で切れています）"
          ));
        });
    }
    return Promise.resolve(new TextDecoder().decode(bytes.subarray(0, HEADER_BYTES)));
  }

  /** Kineto's top-level "deviceProperties" array, read from the header (empty if absent). */
  function deviceProperties(text) {
    var key = text.indexOf('"deviceProperties"');
    if (key < 0) return [];
    var start = text.indexOf("[", key);
    if (start < 0) return [];
    var depth = 0;
    for (var i = start; i < text.length; i++) {
      var c = text[i];
      if (c === "[" || c === "{") depth++;
      else if (c === "]" || c === "}") {
        depth--;
        if (depth === 0) {
          try {
            var parsed = JSON.parse(text.slice(start, i + 1));
            return Array.isArray(parsed) ? parsed.filter(function (d) { return d && typeof d === "object"; }) : [];
          } catch (err) {
            return [];
          }
        }
      }
    }
    return [];
  }

  /** The table generators/tp.py creates from the same block: values quoted, never spliced. */
  function deviceTableSql(devices) {
    var rows = devices.map(function (d) {
      return (
        "SELECT " + sqlInt(d.id) + " AS device, " + (typeof d.name === "string" ? sqlText(d.name.slice(0, 256)) : "NULL") +
        " AS name, " + sqlInt(d.totalGlobalMem) + " AS memory_bytes, " + sqlInt(d.computeMajor) +
        " AS compute_major, " + sqlInt(d.computeMinor) + " AS compute_minor, " + sqlInt(d.numSms) + " AS sms"
      );
    });
    if (!rows.length) {
      rows = ["SELECT NULL AS device, NULL AS name, NULL AS memory_bytes, NULL AS compute_major, " +
        "NULL AS compute_minor, NULL AS sms WHERE FALSE"];
    }
    return (
      "CREATE PERFETTO TABLE guide_trace_device(device LONG, name STRING, memory_bytes LONG, " +
      "compute_major LONG, compute_minor LONG, sms LONG) AS " + rows.join(" UNION ALL ") + ";"
    );
  }

  function commands(plan, tables, root, withTracks) {
    var list = [{ id: "dev.perfetto.RunQuery", args: [tables + "\n" + plan.definitions] }];
    if (withTracks) {
      // One command per detector, the track named by its short id (generators/doctor/browser.py).
      plan.evidence.forEach(function (detector) {
        list.push({
          id: "dev.perfetto.AddDebugSliceTrackWithPivot",
          args: [detector.sql, "finding", detector.id]
        });
      });
    }
    // The trust gate's tab first, the findings' summary beside it (the last tab is in front).
    list.push({ id: "dev.perfetto.RunQueryAndShowTab", args: [plan.trust] });
    list.push({ id: "dev.perfetto.RunQueryAndShowTab", args: [plan.summary.split(ROOT_TOKEN).join(root)] });
    list.push({ id: "dev.perfetto.ExpandTracksByRegex", args: [".*"] });
    return list;
  }

  function viewerUrl(origin, cmds) {
    return origin + "/#!/viewer?startupCommands=" + encodeURIComponent(JSON.stringify(cmds));
  }

  function check(widget, file) {
    var plan = JSON.parse(widget.querySelector(".pg-doctor-browser__plan").textContent);
    var origin = new URL(widget.getAttribute("data-perfetto-origin")).origin;
    var root = new URL(widget.getAttribute("data-guide-root") || "./", window.location.href).href;
    if (!/\.json(\.gz)?$/i.test(file.name)) {
      setStatus(widget, "error", t(
        file.name + " is not a .json or .json.gz trace.",
        file.name + " は .json または .json.gz のトレースではありません。"
      ));
      return;
    }
    // Open the window inside the click or drop, so pop-up blockers see the user's gesture.
    var win = window.open("about:blank", "_blank");
    if (!win) {
      setStatus(widget, "error", t(
        "Your browser blocked the Perfetto window: allow pop-ups for this page.",
        "ブラウザが Perfetto のウィンドウをブロックしました。このページのポップアップを許可してください。"
      ));
      return;
    }
    setStatus(widget, "busy", t("Reading " + file.name + "…", file.name + " を読み込んでいます…"));
    var buffer;
    file
      .arrayBuffer()
      .then(function (b) {
        buffer = b;
        return headerText(b);
      })
      .then(function (text) {
        var first = text.replace(/^\s+/, "")[0];
        if (first !== "{" && first !== "[") {
          throw new Error(t("it is not a JSON trace", "JSON のトレースではありません"));
        }
        var ranks = worldSize(text);
        return fileCheck(buffer).then(function (checked) {
          return deviceTableSql(deviceProperties(text)) + "\n" + fileCheckTableSql(checked, ranks);
        });
      })
      .then(function (tables) {
        var url = viewerUrl(origin, commands(plan, tables, root, true));
        var note = "";
        if (url.length > URL_LIMIT) {
          url = viewerUrl(origin, commands(plan, tables, root, false));
          note = t(
            " The findings' tracks did not fit in the address, so only the summary tab is shown.",
            "所見のトラックはアドレスに収まらなかったため、概要のタブだけを表示しています。"
          );
        }
        if (url.length > URL_LIMIT) {
          throw new Error(t(
            "the doctor's commands are too long for this browser's addresses",
            "doctor のコマンドが、このブラウザで使えるアドレスの長さを超えています"
          ));
        }
        win.location.href = url;
        return handOver(win, origin, buffer, file.name).then(function () {
          setStatus(widget, "done", t(
            "Opened " + file.name + " in Perfetto with the doctor's findings.",
            file.name + " を doctor の所見つきで Perfetto で開きました。"
          ) + note);
        });
      })
      .catch(function (err) {
        if (!win.closed) win.close();
        var reason = err && err.message ? err.message : err;
        setStatus(widget, "error", t(
          "Could not check " + file.name + ": " + reason + ".",
          file.name + " を診断できませんでした: " + reason + "。"
        ));
      });
  }

  function handOver(win, origin, buffer, name) {
    return new Promise(function (resolve, reject) {
      var began = Date.now();
      var timer = window.setInterval(function () {
        if (win.closed) {
          stop();
          reject(new Error(t("the Perfetto window was closed", "Perfetto のウィンドウが閉じられました")));
          return;
        }
        if (Date.now() - began > PING_TIMEOUT_MS) {
          stop();
          reject(new Error(t(
            "the Perfetto UI did not answer within " + PING_TIMEOUT_MS / 1000 + " s",
            "Perfetto UI が " + PING_TIMEOUT_MS / 1000 + " 秒以内に応答しませんでした"
          )));
          return;
        }
        try {
          win.postMessage("PING", origin);
        } catch (err) {
          /* still loading */
        }
      }, 100);
      function onMessage(event) {
        if (event.source !== win || event.origin !== origin || event.data !== "PONG") return;
        stop();
        win.postMessage({ perfetto: { buffer: buffer, title: name, fileName: name, keepApiOpen: true } }, origin, [buffer]);
        resolve();
      }
      function stop() {
        window.clearInterval(timer);
        window.removeEventListener("message", onMessage);
      }
      window.addEventListener("message", onMessage);
    });
  }

  document.addEventListener("change", function (event) {
    var input = event.target;
    if (!input.classList || !input.classList.contains("pg-doctor-browser__file")) return;
    var widget = input.closest(".pg-doctor-browser");
    if (input.files && input.files[0]) check(widget, input.files[0]);
    input.value = "";
  });

  document.addEventListener("dragover", function (event) {
    if (event.target.closest && event.target.closest(".pg-doctor-browser")) event.preventDefault();
  });
  document.addEventListener("drop", function (event) {
    var widget = event.target.closest && event.target.closest(".pg-doctor-browser");
    if (!widget) return;
    event.preventDefault();
    var file = event.dataTransfer && event.dataTransfer.files && event.dataTransfer.files[0];
    if (file) check(widget, file);
  });
})();
