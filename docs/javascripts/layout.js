/*
 * Small layout helpers shared by both editions.
 *
 * - Scroll cues: on a narrow screen a wide table or figure keeps a readable size and scrolls
 *   sideways inside its frame (Material's `.md-typeset__scrollwrap`, the guide's
 *   `.pg-figure__scroll`). A frame whose content is wider than it gets the class `pg-scrolls`
 *   (guide.css draws a fading right edge and a "swipe" line), and `pg-scrolled-end` once the
 *   reader has scrolled to its end. Frames are measured again whenever their size or their
 *   content's changes (a rotated phone, a tab selected, a font arriving).
 * - Long table cells: a cell (or header) with much text gets `pg-cell--mid`, `--long` or
 *   `--longer`, which keeps its column wide enough on a phone that the row stays a few lines
 *   tall (guide.css). A table whose first column names the rows (text, not numbers) gets
 *   `data-pg-named` (not a class: Material styles only tables without one); on a phone that
 *   column stays in view while the others scroll.
 * - The language switcher keeps the reader's place: both editions give their headings the same
 *   ids, so the link to the other edition carries the current `#anchor`.
 *
 * All of them work on pages that Material's instant navigation swaps in, through `document$`.
 */
(function () {
  "use strict";

  var FRAMES = ".md-typeset__scrollwrap, .pg-figure__scroll";

  function update(frame) {
    var over = frame.scrollWidth - frame.clientWidth > 1;
    frame.classList.toggle("pg-scrolls", over);
    frame.classList.toggle(
      "pg-scrolled-end",
      over && frame.scrollLeft + frame.clientWidth >= frame.scrollWidth - 1
    );
  }

  // The frame and what it holds are both watched: a table can grow wider inside a frame that
  // keeps its size (a web font arriving after the first layout), and only its own resize says so.
  var resized = new ResizeObserver(function (entries) {
    entries.forEach(function (entry) { update(entry.target.closest(FRAMES)); });
  });

  function mountFrames() {
    document.querySelectorAll(FRAMES).forEach(function (frame) {
      if (frame.hasAttribute("data-pg-cue")) return;
      frame.setAttribute("data-pg-cue", "");
      frame.addEventListener("scroll", function () { update(frame); }, { passive: true });
      resized.observe(frame);
      frame.querySelectorAll("table, img").forEach(function (content) {
        resized.observe(content);
      });
      update(frame);
    });
  }

  // A frame inside a closed <details> is not laid out, and a resize observer may say nothing
  // about it when it opens: the frames inside are measured again when it does.
  document.addEventListener("toggle", function (event) {
    if (!event.target.open) return;
    event.target.querySelectorAll(FRAMES).forEach(update);
  }, true);

  function markLongCells() {
    document.querySelectorAll(".md-typeset table:not([class]) :is(th, td)").forEach(function (cell) {
      // Full-width (Japanese) characters take about two Latin characters' width.
      var text = cell.textContent.trim();
      var length = text.length + (text.match(/[\u3000-\u9fff\uff00-\uffef]/g) || []).length;
      cell.classList.toggle("pg-cell--mid", length > 16 && length <= 40);
      cell.classList.toggle("pg-cell--long", length > 40 && length <= 100);
      cell.classList.toggle("pg-cell--longer", length > 100);
    });
  }

  // A table whose first column names its rows (text, not numbers) keeps that column in view.
  var NUMBER = /^[-+~≈]?[\d.,\s]+\s*(%|[a-zµ]*s|[KMGT]?i?B|×)?$/;

  function markNamedRows() {
    document.querySelectorAll(".md-typeset table:not([class])").forEach(function (table) {
      var firsts = Array.prototype.map.call(table.tBodies[0] ? table.tBodies[0].rows : [],
        function (row) { return row.cells[0] ? row.cells[0].textContent.trim() : ""; });
      var named = firsts.filter(function (text) { return text && !NUMBER.test(text); });
      table.toggleAttribute("data-pg-named", named.length * 2 > firsts.length);
    });
  }

  function mount() {
    markLongCells();
    markNamedRows();
    mountFrames();
  }

  // One listener for every switcher link, present or swapped in later. Both editions have the
  // same page paths and heading ids, so the link (the other edition's root plus this page's
  // path) and this page's #anchor are the reader's place there. The listener goes first and
  // ends the click: the theme's own handler looks the page up in the other edition's sitemap
  // and, where it does not find it there, opens that edition's home page instead.
  document.addEventListener("click", function (event) {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    var link = event.target.closest && event.target.closest("a.md-select__link[hreflang]");
    if (!link) return;
    var url = new URL(link.href, location.href);
    url.hash = location.hash;
    event.preventDefault();
    event.stopPropagation();
    location.assign(url.href);
  }, true);

  // The theme's "skip to content" link: following a fragment only moves where the next Tab
  // starts, and not in every browser or every moment of the page's start (the theme's own
  // scripts may take the click). The content's first heading takes the focus itself, so the next
  // Tab always goes on from there. The theme's instant navigation then swaps the page in anew
  // for the new fragment, which takes the focused heading away (the focus falls back to the
  // body, and on a slow machine the next Tab started from the top of the page): the heading of
  // the swapped-in page takes the focus again.
  var skippedTo = null;

  function focusHeading(id) {
    var target = document.getElementById(id);
    if (!target) return;
    if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
    target.focus();
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a.md-skip");
    if (!link || !link.hash) return;
    var id = decodeURIComponent(link.hash.slice(1));
    if (!document.getElementById(id)) return;
    skippedTo = id;
    setTimeout(function () { focusHeading(id); }, 0);
  });

  function afterSwap() {
    if (skippedTo && decodeURIComponent(location.hash.slice(1)) === skippedTo) {
      focusHeading(skippedTo);
    }
    skippedTo = null;
  }

  if (window.document$) {
    window.document$.subscribe(function () {
      mount();
      afterSwap();
    });
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", mount);
  } else {
    mount();
  }
})();
