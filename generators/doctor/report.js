/*
 * "Open in Perfetto" for a doctor's report: the reader chooses the trace file once per trace,
 * and each evidence button opens the Perfetto UI zoomed on that row's moment, handing the file
 * over with the UI's postMessage protocol. The only host contacted is the Perfetto UI's.
 */
(function () {
  "use strict";
  var origin = document.body.getAttribute("data-perfetto-origin") || "https://ui.perfetto.dev";
  var COMMANDS = [{ id: "dev.perfetto.ExpandTracksByRegex", args: [".*"] }];
  var files = {};

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
    if (files[key]) status(key, "Ready: " + files[key].name, false);
  });

  function open(button) {
    var key = button.getAttribute("data-trace");
    var file = files[key];
    if (!file) {
      status(key, "Choose the trace file first (the file picker above).", true);
      return;
    }
    var url = origin + "/#!/viewer?visStart=" + button.getAttribute("data-vis-start") +
      "&visEnd=" + button.getAttribute("data-vis-end") +
      "&startupCommands=" + encodeURIComponent(JSON.stringify(COMMANDS));
    var win = window.open(url, "_blank");
    if (!win) {
      status(key, "The browser blocked the Perfetto window: allow pop-ups for this page.", true);
      return;
    }
    status(key, "Reading " + file.name + "…", false);
    file.arrayBuffer().then(function (buffer) {
      var began = Date.now();
      var timer = window.setInterval(function () {
        if (win.closed || Date.now() - began > 20000) {
          window.clearInterval(timer);
          window.removeEventListener("message", onMessage);
          status(key, "The Perfetto UI did not answer; try again, or serve this report over http.", true);
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
        status(key, "Opened " + file.name + " in Perfetto.", false);
      }
      window.addEventListener("message", onMessage);
    }, function () {
      status(key, "Could not read " + file.name + ".", true);
    });
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button.open");
    if (button) open(button);
  });
})();
