/*
 * "Open in Perfetto" for a doctor's report: the reader chooses the trace file once per trace,
 * and each evidence button opens the Perfetto UI zoomed on that row's moment, handing the file
 * over with the UI's postMessage protocol. The only host contacted is the Perfetto UI's.
 * Messages are in the report's language (<html lang>: "ja" for Japanese, else English).
 */
(function () {
  "use strict";
  var origin = document.body.getAttribute("data-perfetto-origin") || "https://ui.perfetto.dev";
  var COMMANDS = [{ id: "dev.perfetto.ExpandTracksByRegex", args: [".*"] }];
  var files = {};
  var JA = /^ja\b/i.test(document.documentElement.lang || "");

  function t(en, ja) {
    return JA ? ja : en;
  }

  function status(key, text, isError) {
    var picker = document.querySelector('input[type=file][data-trace="' + key + '"]');
    var el = picker && picker.closest(".picker").querySelector(".status");
    if (el) {
      el.textContent = text;
      el.setAttribute("data-state", isError ? "error" : "ok");
    }
  }

  document.addEventListener("change", function (event) {
    var input = event.target;
    if (!input.matches || !input.matches("input[type=file][data-trace]")) return;
    var key = input.getAttribute("data-trace");
    files[key] = input.files && input.files[0];
    if (files[key]) status(key, t("Ready: ", "準備ができました: ") + files[key].name, false);
  });

  function open(button) {
    var key = button.getAttribute("data-trace");
    var file = files[key];
    if (!file) {
      status(key, t(
        "Choose the trace file first (the file picker above).",
        "先にトレースのファイルを選んでください（上のファイル選択）。"
      ), true);
      return;
    }
    var url = origin + "/#!/viewer?visStart=" + button.getAttribute("data-vis-start") +
      "&visEnd=" + button.getAttribute("data-vis-end") +
      "&startupCommands=" + encodeURIComponent(JSON.stringify(COMMANDS));
    var win = window.open(url, "_blank");
    if (!win) {
      status(key, t(
        "The browser blocked the Perfetto window: allow pop-ups for this page.",
        "ブラウザが Perfetto のウィンドウをブロックしました。このページのポップアップを許可してください。"
      ), true);
      return;
    }
    status(key, t("Reading " + file.name + "…", file.name + " を読み込んでいます…"), false);
    file.arrayBuffer().then(function (buffer) {
      var began = Date.now();
      var timer = window.setInterval(function () {
        if (win.closed || Date.now() - began > 20000) {
          window.clearInterval(timer);
          window.removeEventListener("message", onMessage);
          status(key, t(
            "The Perfetto UI did not answer; try again, or serve this report over http.",
            "Perfetto UI が応答しませんでした。もう一度試すか、このレポートを http で配信してください。"
          ), true);
          return;
        }
        try { win.postMessage("PING", origin); } catch (err) { /* not loaded yet */ }
      }, 100);
      function onMessage(event) {
        if (event.source !== win || event.data !== "PONG") return;
        window.clearInterval(timer);
        window.removeEventListener("message", onMessage);
        win.postMessage({ perfetto: { buffer: buffer, title: file.name, fileName: file.name,
          keepApiOpen: true } }, origin, [buffer]);
        status(key, t("Opened " + file.name + " in Perfetto.", file.name + " を Perfetto で開きました。"), false);
      }
      window.addEventListener("message", onMessage);
    }, function () {
      status(key, t("Could not read " + file.name + ".", file.name + " を読み込めませんでした。"), true);
    });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button.open");
    if (button) open(button);
  });
})();
