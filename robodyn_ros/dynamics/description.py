"""A robot description as URDF text, whatever form it comes in: a file (``.xacro`` files expanded
with xacro), a string of XML, or bytes, in any encoding the XML declares.

The text handed on is a ``str`` without an XML declaration: XML parsers given a ``str`` refuse
an ``encoding="..."`` in it (lxml, hence urdfdom-py: "Unicode strings with encoding declaration are
not supported"), and once decoded the declaration no longer says anything true. Bytes are decoded
as the XML specification says (appendix F): a byte-order mark first, else the declared encoding,
else UTF-8.
"""
from __future__ import annotations

import codecs
import io
import os
import re
import warnings
from collections.abc import Mapping, Sequence
from contextlib import redirect_stderr
from pathlib import Path

from ..plumbing.resources import PACKAGE_URI, resolve_uri

# what a string that is XML rather than a path starts with (after blanks and a byte-order mark)
_XML_START = "<"
_DECLARATION = re.compile(r"\A\s*<\?xml\b[^>]*\?>")
_ENCODING = re.compile(rb"""\A\s*<\?xml\b[^>]*?\bencoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']""")
# byte-order marks, longest first (the UTF-32 LE mark begins with the UTF-16 LE one)
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
         (codecs.BOM_UTF16_BE, "utf-16-be"))
# "<?" in UTF-16 without a byte-order mark
_UTF16_UNMARKED = ((b"\x00<\x00?", "utf-16-be"), (b"<\x00?\x00", "utf-16-le"))


class DescriptionError(ValueError):
    """A description that cannot be read; the message names the file (or the string) and why."""


def read_description(description, xacro_args=None) -> tuple[str, str]:
    """``(source, urdf)``: a name for messages and the URDF text of ``description``.

    ``description`` is a path (``str`` or ``os.PathLike``; a ``package://PACKAGE/PATH`` URI, e.g.
    ``package://robodyn_ros/urdf/puma560.urdf``, names a package's file as ROS does), URDF XML
    as a ``str`` (anything that starts with ``<``) or as ``bytes``. A path ending in ``.xacro``
    is expanded with xacro, its arguments from ``xacro_args``: ``name:=value`` strings (as on
    xacro's command line) or a mapping of names to values."""
    if isinstance(description, (bytes, bytearray, memoryview)):
        source = "<robot_description bytes>"
        _no_xacro_args(source, xacro_args)
        return source, _decode(bytes(description), source)
    if isinstance(description, str) and description.lstrip("\ufeff \t\r\n").startswith(_XML_START):
        source = "<robot_description>"
        _no_xacro_args(source, xacro_args)
        return source, _undeclared(description.lstrip("\ufeff"))
    if not isinstance(description, (str, os.PathLike)):
        raise DescriptionError(f"a robot description is a path, XML text or bytes, not "
                               f"{type(description).__name__}")
    source = os.fspath(description)
    if source.startswith(PACKAGE_URI):
        try:
            description = resolve_uri(source)
        except FileNotFoundError as exc:
            raise DescriptionError(str(exc)) from None
    path = Path(description).expanduser()
    if path.suffix == ".xacro":
        return source, _undeclared(_expand_xacro(path, source, xacro_args))
    _no_xacro_args(source, xacro_args)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DescriptionError(f"{source}: cannot read URDF: {exc.strerror}") from None
    return source, _decode(data, source)


def _decode(data: bytes, source: str) -> str:
    """The text of an XML document given as bytes, without its XML declaration."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return _undeclared(_decoded(data[len(bom):], encoding, source))
    for start, encoding in _UTF16_UNMARKED:
        if data.startswith(start):
            return _undeclared(_decoded(data, encoding, source))
    declared = _ENCODING.match(data)
    encoding = declared.group(1).decode("ascii") if declared else "utf-8"
    try:
        family = codecs.lookup(encoding).name
    except LookupError:
        raise DescriptionError(f"{source}: <?xml encoding='{encoding}'?> is not an encoding "
                               "Python knows") from None
    if family.startswith(("utf-16", "utf-32")):
        raise DescriptionError(f"{source}: <?xml encoding='{encoding}'?>, but the bytes are not "
                               f"{encoding} (no byte-order mark, and the declaration itself is "
                               "one byte per character)")
    return _undeclared(_decoded(data, encoding, source))


def _decoded(data, encoding, source):
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise DescriptionError(f"{source}: line {line}: not valid {encoding} "
                               f"({exc.reason} at byte {exc.start}); declare the file's encoding "
                               "in <?xml version='1.0' encoding='...'?>") from None


def _undeclared(text: str) -> str:
    # keep the line count, so that parser messages still point at the right line
    return _DECLARATION.sub(lambda m: "\n" * m.group(0).count("\n"), text, count=1)


def _no_xacro_args(source, xacro_args):
    if xacro_args:
        raise DescriptionError(f"{source}: xacro_args {list(xacro_args)} given, but this is not "
                               "a .xacro file")


def _mappings(xacro_args, source) -> dict[str, str]:
    """``name:=value`` strings (or a mapping) as the mappings xacro takes."""
    if xacro_args is None:
        return {}
    if isinstance(xacro_args, Mapping):
        return {str(k): str(v) for k, v in xacro_args.items()}
    if isinstance(xacro_args, str) or not isinstance(xacro_args, Sequence):
        raise DescriptionError(f"{source}: xacro_args must be a list of 'name:=value' strings, "
                               f"got {xacro_args!r}")
    mappings = {}
    for arg in xacro_args:
        name, sep, value = str(arg).partition(":=")
        if not sep or not name.strip():
            raise DescriptionError(f"{source}: xacro_args: '{arg}' is not of the form name:=value")
        mappings[name.strip()] = value.strip()
    return mappings


def _expand_xacro(path: Path, source: str, xacro_args) -> str:
    """The URDF that xacro makes of the file ``path`` with the arguments ``xacro_args``."""
    import xacro
    from xacro.substitution_args import ArgException
    mappings = _mappings(xacro_args, source)
    if not path.is_file():
        raise DescriptionError(f"{source}: cannot read xacro file: no such file")
    complaints = io.StringIO()
    try:
        with redirect_stderr(complaints):   # xacro prints its warnings
            document = xacro.process_file(os.fspath(path.resolve()), mappings=mappings)
    except Exception as exc:
        # whatever xacro raises is about the file: it wraps most of its errors, but ${...}
        # evaluation errors and $(find) without an ament index arrive bare
        missing = getattr(exc, "exc", None)
        if isinstance(missing, ArgException):
            raise DescriptionError(f"{source}: xacro: $(arg {missing}) is not set: give it in "
                                   f"xacro_args as {missing}:=value, or give <xacro:arg "
                                   f"name='{missing}'> a default") from None
        where = xacro.filestack[-1] if xacro.filestack else None
        inside = f" (in {where})" if where and os.fspath(where) != os.fspath(path.resolve()) else ""
        raise DescriptionError(f"{source}: xacro failed{inside}: {exc or type(exc).__name__}") \
            from None
    if complaints.getvalue().strip():
        warnings.warn(f"{source}: xacro: {' '.join(complaints.getvalue().split())}", stacklevel=4)
    return document.toxml()
