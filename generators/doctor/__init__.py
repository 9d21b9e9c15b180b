"""The doctor: the guide's lessons as detectors that run on any Kineto trace.

``python -m generators.doctor TRACE [TRACE ...]`` (see ``__main__.py``). Detectors are the SQL
files in ``generators/detectors/`` (format in :mod:`generators.doctor.detectors`);
:func:`generators.doctor.examine.examine` runs them on an opened trace, and
:mod:`generators.doctor.render` writes the report as text, Markdown, JSON or HTML.
"""
