"""The guide's published address as ``mkdocs.yml`` configures it, read without MkDocs.

``site_url`` in ``mkdocs.yml`` is ``!ENV [PROFILING_GUIDE_SITE_URL, "<address>"]``: the variable
when a build sets it (the Pages workflow does), else the address written there. A report the
doctor writes is read elsewhere, by someone else, so its links must lead to that published
address rather than to a local server; the doctor reads it here, from the same line MkDocs reads
(``tests/test_doctor.py`` checks that both read the same address).
"""

from __future__ import annotations

import re
from pathlib import Path

from generators import env

MKDOCS_CONFIG = Path(__file__).resolve().parents[1] / "mkdocs.yml"

#: ``site_url: "https://..."`` or ``site_url: !ENV`` ``[VARIABLE, ..., "https://..."]`` (the
#: last item is the default when no variable named before it is set).
_SITE_URL_LINE = re.compile(
    r"""^site_url:\s*(?:!ENV\s*\[(?P<env>[^\]]*)\]|(?P<plain>["']?[^"'\s#]*["']?))""", re.M
)


def configured_site_url(config: Path | None = None) -> str:
    """The site's address: ``PROFILING_GUIDE_SITE_URL`` when set, else the default
    ``site_url`` has in ``config`` (``mkdocs.yml``); "" when neither names one."""
    if env.SITE_URL.get():
        return env.SITE_URL.get()
    match = _SITE_URL_LINE.search((config or MKDOCS_CONFIG).read_text(encoding="utf-8"))
    if match is None:
        return ""
    if match["env"] is not None:
        items = [item.strip() for item in match["env"].split(",")]
        value = items[-1] if len(items) > 1 else ""
    else:
        value = match["plain"]
    return value.strip("\"'")
