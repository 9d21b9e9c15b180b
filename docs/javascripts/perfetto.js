/*
 * "Open in Perfetto" buttons.
 *
 * Markup (emitted by the site build):
 *
 *   <div class="pg-perfetto" data-trace-src="..." data-title="..." data-file-name="..."
 *        data-perfetto-origin="https://ui.perfetto.dev"
 *        data-time-start="..." data-time-end="..."             (focus window in seconds,
 *        data-vis-start="..." data-vis-end="..."                and in trace ns; optional)
 *        data-trace-size="9.15 MB">                              (the file's size, for the status)
 *     <button type="button" class="pg-perfetto__open">Open in Perfetto</button>
 *     <a class="pg-perfetto__link" ...>open by URL</a>          (optional)
 *     <p class="pg-perfetto__note ...">...</p>                  (optional: the whole trace's
 *                                                               reason, the importer's drops)
 *     <p class="pg-perfetto__status" role="status" hidden></p>
 *   </div>
 *
 * A click opens the Perfetto UI in a new window (synchronously, so pop-up blockers
 * see the user gesture), fetches the trace from this site, waits until the UI
 * answers PING with PONG, then hands the trace over with postMessage.
 *
 * The focus window travels in the UI's URL (`visStart`/`visEnd`, absolute trace
 * nanoseconds), which the UI applies once the trace is ready, however long a large
 * trace takes to load; the postMessage zoom is sent too, for UIs without it. The
 * URL also carries startup commands that expand every track group, so the GPU
 * streams are visible without hunting for them.
 *
 * Clicks are handled by one listener on the document, so widgets that appear
 * later (MkDocs Material instant navigation swaps the page content) work too.
 * The only hosts contacted are this page's own origin and the Perfetto origin.
 */
(function () {
  "use strict";

  if (window.__pgPerfettoInstalled) {
    return;
  }

  /** A message in the page's language (the Japanese edition sets <html lang="ja">). */
  function t(en, ja) {
    return /^ja\b/i.test(document.documentElement.lang || "") ? ja : en;
  }
  window.__pgPerfettoInstalled = true;

  var DEFAULT_ORIGIN = "https://ui.perfetto.dev";
  var PING_INTERVAL_MS = 50;
  var PING_TIMEOUT_MS = 20000;
  /** Perfetto's stable automation commands, run once the trace has loaded. */
  var STARTUP_COMMANDS = [{ id: "dev.perfetto.ExpandTracksByRegex", args: [".*"] }];
  var NANOSECONDS = /^[0-9]{1,19}$/;

  /** In-flight hand-over per widget, so a second click replaces the first. */
  var sessions = new WeakMap();

  /** A failure explained to the reader; `fromFetch` marks a trace that could not be loaded. */
  function UserError(message, fromFetch) {
    this.message = message;
    this.fromFetch = Boolean(fromFetch);
  }

  // ---------------------------------------------------------------- status

  function statusElement(widget) {
    var status = widget.querySelector(".pg-perfetto__status");
    if (!status) {
      status = document.createElement("p");
      status.className = "pg-perfetto__status";
      status.setAttribute("role", "status");
      widget.appendChild(status);
    }
    return status;
  }

  /**
   * Show a message. `parts` is a string or an array of strings and nodes; strings
   * always become text nodes, never markup.
   */
  function setStatus(widget, state, parts) {
    var status = statusElement(widget);
    var list = Array.isArray(parts) ? parts : [parts];
    status.textContent = "";
    list.forEach(function (part) {
      status.appendChild(typeof part === "string" ? document.createTextNode(part) : part);
    });
    status.hidden = false;
    status.classList.toggle("pg-perfetto__status--error", state === "error" || state === "blocked");
    widget.setAttribute("data-state", state);
  }

  function retryButton(label) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "pg-perfetto__retry";
    button.textContent = label;
    return button;
  }

  function code(text) {
    var element = document.createElement("code");
    element.textContent = text;
    return element;
  }

  // ---------------------------------------------------------------- config

  function readConfig(widget) {
    var src = widget.getAttribute("data-trace-src");
    if (!src) {
      throw new UserError(
        t(
          "This button has no trace attached (missing data-trace-src).",
          "このボタンにはトレースが付いていません（data-trace-src がありません）。"
        )
      );
    }
    var traceUrl;
    try {
      traceUrl = new URL(src, document.baseURI);
    } catch (err) {
      throw new UserError(t("Invalid trace address: ", "トレースのアドレスが不正です: ") + src);
    }
    var fileName = widget.getAttribute("data-file-name") || traceUrl.pathname.split("/").pop() || "trace";
    if (traceUrl.origin !== window.location.origin) {
      throw new UserError(
        t("Refusing to fetch " + fileName + " from another site.",
          "ほかのサイトから " + fileName + " を取得することはしません。")
      );
    }

    var originAttr = widget.getAttribute("data-perfetto-origin") || DEFAULT_ORIGIN;
    var originUrl;
    try {
      originUrl = new URL(originAttr);
    } catch (err) {
      throw new UserError(t("Invalid Perfetto UI address: ", "Perfetto UI のアドレスが不正です: ") + originAttr);
    }
    if (originUrl.protocol !== "https:" && originUrl.protocol !== "http:") {
      throw new UserError(t("Invalid Perfetto UI address: ", "Perfetto UI のアドレスが不正です: ") + originAttr);
    }

    var focus = null;
    var start = parseFloat(widget.getAttribute("data-time-start") || "");
    var end = parseFloat(widget.getAttribute("data-time-end") || "");
    if (isFinite(start) && isFinite(end) && end > start) {
      focus = { timeStart: start, timeEnd: end };
    }
    // Integers as text: nanoseconds since the epoch do not fit a double exactly.
    var visStart = widget.getAttribute("data-vis-start") || "";
    var visEnd = widget.getAttribute("data-vis-end") || "";
    var window_ = null;
    if (NANOSECONDS.test(visStart) && NANOSECONDS.test(visEnd)) {
      window_ = { start: visStart, end: visEnd };
    }

    return {
      traceUrl: traceUrl.href,
      fileName: fileName,
      size: widget.getAttribute("data-trace-size") || "",
      title: widget.getAttribute("data-title") || fileName,
      origin: originUrl.origin,
      focus: focus,
      visible: window_,
    };
  }

  /** The address the Perfetto window opens: the viewer, the focus window, the commands. */
  function viewerUrl(config) {
    var args = [];
    if (config.visible) {
      args.push("visStart=" + config.visible.start, "visEnd=" + config.visible.end);
    }
    args.push("startupCommands=" + encodeURIComponent(JSON.stringify(STARTUP_COMMANDS)));
    return config.origin + "/#!/viewer?" + args.join("&");
  }

  // ---------------------------------------------------------------- steps

  function fetchTrace(config) {
    function failure(reason) {
      return new UserError(
        t("Could not load the trace " + config.fileName + " (" + reason + ").",
          "トレース " + config.fileName + " を読み込めませんでした（" + reason + "）。"),
        true
      );
    }
    return fetch(config.traceUrl, { credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) {
          throw failure(response.status === 404 ? t("not found", "見つかりません") : "HTTP " + response.status);
        }
        return response.arrayBuffer();
      })
      .catch(function (err) {
        throw err instanceof UserError ? err : failure(t("network error", "ネットワークエラー"));
      });
  }

  /** True once the opened window shows a document from the Perfetto origin. */
  function showsPerfetto(win, origin) {
    try {
      // Readable only while the window is still same-origin with us (the initial
      // about:blank, or a Perfetto UI hosted on this very site).
      return win.location.href.indexOf(origin + "/") === 0;
    } catch (err) {
      return true; // Cross-origin: it has navigated away from about:blank.
    }
  }

  /** Resolves when the Perfetto window answers PONG. */
  function waitForPerfetto(session) {
    return new Promise(function (resolve, reject) {
      var began = Date.now();

      session.onMessage = function (event) {
        if (event.source !== session.win || event.origin !== session.config.origin) {
          return;
        }
        if (event.data === "PONG") {
          session.stopWaiting();
          resolve();
        }
      };
      window.addEventListener("message", session.onMessage);

      session.timer = window.setInterval(function () {
        if (session.win.closed) {
          session.stopWaiting();
          reject(
            new UserError(
              t("The Perfetto window was closed before the trace was sent.",
                "トレースを送る前に Perfetto のウィンドウが閉じられました。")
            )
          );
          return;
        }
        if (Date.now() - began > PING_TIMEOUT_MS) {
          session.stopWaiting();
          reject(
            new UserError(
              t(
                "Perfetto UI did not respond within " + PING_TIMEOUT_MS / 1000 + " s (" +
                  session.config.origin + "). Check the other window, or try again.",
                "Perfetto UI が " + PING_TIMEOUT_MS / 1000 + " 秒以内に応答しませんでした（" +
                  session.config.origin + "）。もう一方のウィンドウを確認するか、やり直してください。"
              )
            )
          );
          return;
        }
        if (!showsPerfetto(session.win, session.config.origin)) {
          return;
        }
        try {
          session.win.postMessage("PING", session.config.origin);
        } catch (err) {
          // Not ready yet; the next tick tries again.
        }
      }, PING_INTERVAL_MS);
    });
  }

  function sendTrace(session, buffer) {
    var config = session.config;
    session.win.postMessage(
      {
        perfetto: {
          buffer: buffer,
          title: config.title,
          fileName: config.fileName,
          url: window.location.href,
          keepApiOpen: true,
        },
      },
      config.origin,
      [buffer]
    );
    if (config.focus) {
      session.win.postMessage(
        {
          perfetto: {
            timeStart: config.focus.timeStart,
            timeEnd: config.focus.timeEnd,
            viewPercentage: 1,
          },
        },
        config.origin
      );
    }
  }

  // ---------------------------------------------------------------- flow

  function cancel(widget) {
    var previous = sessions.get(widget);
    if (previous) {
      previous.cancelled = true;
      previous.stopWaiting();
      sessions.delete(widget);
    }
  }

  function explainFileProtocol(widget) {
    setStatus(widget, "error", [
      t(
        "Opening traces in Perfetto needs the guide to be served over http: browsers do not " +
          "let pages opened from a file fetch the trace. Run ",
        "Perfetto でトレースを開くには、ガイドを http で配信する必要があります。ファイルとして" +
          "開いたページからはトレースを取得できません。"
      ),
      code("make serve"),
      t(" and open the address it prints.", " を実行し、表示されたアドレスを開いてください。"),
    ]);
  }

  function explainBlocked(widget) {
    setStatus(widget, "blocked", [
      t("Your browser blocked the Perfetto window (pop-up). ",
        "ブラウザが Perfetto のウィンドウ（ポップアップ）をブロックしました。"),
      retryButton(t("Open Perfetto again", "Perfetto をもう一度開く")),
      t(", or allow pop-ups for this site.", "か、このサイトのポップアップを許可してください。"),
    ]);
  }

  function open(widget) {
    cancel(widget);

    if (window.location.protocol === "file:") {
      explainFileProtocol(widget);
      return;
    }

    var config;
    try {
      config = readConfig(widget);
    } catch (err) {
      setStatus(widget, "error", err instanceof UserError ? err.message : String(err));
      return;
    }

    // Must happen synchronously inside the click handler.
    var win = window.open(viewerUrl(config), "_blank");
    if (!win) {
      explainBlocked(widget);
      return;
    }

    var session = {
      config: config,
      win: win,
      cancelled: false,
      timer: null,
      onMessage: null,
      stopWaiting: function () {
        if (session.timer !== null) {
          window.clearInterval(session.timer);
          session.timer = null;
        }
        if (session.onMessage) {
          window.removeEventListener("message", session.onMessage);
          session.onMessage = null;
        }
      },
    };
    sessions.set(widget, session);

    var ready = false;
    var sized = config.size ? " (" + config.size + ")" : "";
    var sizedJa = config.size ? "（" + config.size + "）" : "";
    setStatus(widget, "fetching", t("Fetching " + config.fileName + sized + "…",
      config.fileName + sizedJa + " を取得しています…"));

    var traceLoaded = fetchTrace(config).then(function (buffer) {
      if (!session.cancelled && !ready) {
        setStatus(widget, "waiting", [
          t("Waiting for the Perfetto UI to start in the new window; it then loads the trace" +
              sized + ", which can take tens of seconds for a large one. No new window? Your " +
              "browser may have blocked it: allow pop-ups for this site, then ",
            "新しいウィンドウで Perfetto UI が起動するのを待っています。起動後にトレース" + sizedJa +
              "を読み込みます。大きなトレースでは数十秒かかることがあります。新しいウィンドウが" +
              "開かない場合は、ブラウザがブロックしたのかもしれません。このサイトのポップアップを" +
              "許可してから "),
          retryButton(t("open Perfetto again", "Perfetto をもう一度開く")),
          t(".", "。"),
        ]);
      }
      return buffer;
    });
    var perfettoReady = waitForPerfetto(session).then(function () {
      ready = true;
    });

    Promise.all([traceLoaded, perfettoReady]).then(
      function (results) {
        if (session.cancelled) {
          return;
        }
        sessions.delete(widget);
        sendTrace(session, results[0]);
        setStatus(
          widget,
          "loaded",
          t("Sent \u201c" + config.title + "\u201d" + sized + " to the Perfetto window. It " +
              "appears there once the UI has loaded it: a large trace can take tens of seconds.",
            "\u300c" + config.title + "\u300d" + sizedJa + " を Perfetto のウィンドウに送りました。" +
              "UI が読み込み終えると表示されます。大きなトレースでは数十秒かかることがあります。")
        );
      },
      function (err) {
        if (session.cancelled) {
          return;
        }
        session.stopWaiting();
        sessions.delete(widget);
        if (err instanceof UserError && err.fromFetch) {
          // The empty Perfetto window would hide this page's error message.
          try {
            win.close();
          } catch (closeErr) {
            // Ignore: the user can close it.
          }
        }
        setStatus(widget, "error", err instanceof UserError ? err.message : String(err));
      }
    );
  }

  /**
   * The page's skip link to its first button (emitted by the build after the title): following
   * a fragment only moves where the next Tab starts, so the button itself takes the focus.
   */
  function skipToButton(link) {
    var button = document.getElementById((link.getAttribute("href") || "").replace(/^#/, ""));
    if (!button) {
      return false;
    }
    button.scrollIntoView({ block: "center" });
    button.focus();
    return true;
  }

  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!(target instanceof Element)) {
      return;
    }
    var skip = target.closest(".pg-perfetto-skip");
    if (skip) {
      if (skipToButton(skip)) {
        event.preventDefault();
      }
      return;
    }
    var trigger = target.closest(".pg-perfetto__open, .pg-perfetto__retry");
    if (!trigger) {
      return;
    }
    var widget = trigger.closest(".pg-perfetto");
    if (!widget) {
      return;
    }
    event.preventDefault();
    open(widget);
  });
})();
