"""Constants shared by the browser tests that drive the Perfetto UI."""

import re

# Perfetto keeps time in integer nanoseconds; the seconds travel as doubles.
TOLERANCE_NS = 1_000

STEP_TIMEOUT_MS = 20_000

# Everything not on 127.0.0.1 is refused, so nothing in these tests leaves the machine.
NON_LOCAL = re.compile(r"^(?!(?:https?|wss?)://127\.0\.0\.1[:/])[a-z][a-z0-9+.-]*://")

# window.app is a debug handle the Perfetto UI exposes.
TRACE_READY_JS = "() => !!(window.app && window.app.trace && !window.app.isLoadingTrace)"

VISIBLE_WINDOW_JS = """() => {
  const span = window.app.trace.timeline.visibleWindow;
  return {
    integral: span.start.integral.toString(),
    fractional: span.start.fractional,
    duration: span.duration,
  };
}"""
