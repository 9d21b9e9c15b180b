/*
 * Small layout helpers shared by both editions.
 *
 * - Scroll cues: on a narrow screen a wide table or figure keeps a readable size and scrolls
 *   sideways inside its frame (Material's `.md-typeset__scrollwrap`, the guide's
 *   `.pg-figure__scroll`). A frame whose content is wider than it gets the class `pg-scrolls`
 *   (guide.css draws a fading right edge and a "swipe" line), and `pg-scrolled-end` once the
 *   reader has scrolled to its end. Frames are measured again whenever their size changes (a
 *   rotated phone, a tab selected).
 * - The language switcher keeps the reader's place: both editions give their headings the same
 *   ids, so the link to the other edition carries the current `#anchor`.
 *
 * Both work on pages that Material's instant navigation swaps in, through `document$`.
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

  var resized = new ResizeObserver(function (entries) {
    entries.forEach(function (entry) { update(entry.target); });
  });

  function mountFrames() {
    document.querySelectorAll(FRAMES).forEach(function (frame) {
      if (frame.hasAttribute("data-pg-cue")) return;
      frame.setAttribute("data-pg-cue", "");
      frame.addEventListener("scroll", function () { update(frame); }, { passive: true });
      resized.observe(frame);
      update(frame);
    });
  }

  // One listener for every switcher link, present or swapped in later.
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a.md-select__link[hreflang]");
    if (!link || !location.hash) return;
    var url = new URL(link.href, location.href);
    url.hash = location.hash;
    link.href = url.href;
  }, true);

  if (window.document$) {
    window.document$.subscribe(mountFrames);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", mountFrames);
  } else {
    mountFrames();
  }
})();
