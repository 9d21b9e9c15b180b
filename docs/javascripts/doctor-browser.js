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

  function sqlText(value) {
    return "'" + String(value).replace(/'/g, "''") + "'";
  }

  function sqlInt(value) {
    return typeof value === "number" && isFinite(value) ? String(Math.trunc(value)) : "NULL";
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

  function concat(chunks, size) {
    var out = new Uint8Array(size);
    var at = 0;
    chunks.forEach(function (c) {
      out.set(c, at);
      at += c.length;
    });
    return out;
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

  function commands(plan, devices, root, withTracks) {
    var list = [{ id: "dev.perfetto.RunQuery", args: [deviceTableSql(devices) + "\n" + plan.definitions] }];
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
        var devices = deviceProperties(text);
        var url = viewerUrl(origin, commands(plan, devices, root, true));
        var note = "";
        if (url.length > URL_LIMIT) {
          url = viewerUrl(origin, commands(plan, devices, root, false));
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
