"""``mi.xml.dict_to_xml``: a dict scene written as a Mitsuba XML file."""

from __future__ import annotations

import os
from typing import Any, List, Union
from xml.sax.saxutils import quoteattr

import numpy as np

from . import _native

# Plugin type -> the XML tag of its category.
_TAG = {name: cat for cat, names in _native._plugins() for name in names}


def _number(x: Any) -> str:
    return repr(float(x)) if not float(x).is_integer() else str(int(x)) if abs(x) < 1e15 else repr(float(x))


def _value(name: str, v: Any, indent: str) -> List[str]:
    n = quoteattr(name)
    if isinstance(v, dict):
        return _object(v, indent, name)
    if isinstance(v, bool):
        return [f"{indent}<boolean name={n} value=\"{str(v).lower()}\"/>"]
    if isinstance(v, int):
        return [f"{indent}<integer name={n} value=\"{v}\"/>"]
    if isinstance(v, float):
        return [f"{indent}<float name={n} value=\"{_number(v)}\"/>"]
    if isinstance(v, str):
        return [f"{indent}<string name={n} value={quoteattr(v)}/>"]
    if hasattr(v, "__heliograph_matrix__"):
        m = " ".join(_number(x) for row in v.__heliograph_matrix__ for x in row)
        return [f"{indent}<transform name={n}>", f"{indent}    <matrix value=\"{m}\"/>", f"{indent}</transform>"]
    if hasattr(v, "__heliograph_color__"):
        return [f"{indent}<rgb name={n} value=\"{' '.join(_number(x) for x in v.__heliograph_color__)}\"/>"]
    a = np.asarray(v, dtype=np.float64)
    if a.shape == (3,):
        return [f"{indent}<point name={n} value=\"{', '.join(_number(x) for x in a)}\"/>"]
    raise TypeError(f"dict_to_xml: the value of '{name}' ({type(v).__name__}) has no XML form")


def _object(d: dict, indent: str, name: str) -> List[str]:
    kind = d.get("type")
    if not isinstance(kind, str):
        raise ValueError(f"dict_to_xml: '{name}' has no 'type' string (got {kind!r})")
    if kind == "rgb":
        rgb = " ".join(_number(x) for x in np.broadcast_to(d["value"], 3))
        return [f"{indent}<rgb name={quoteattr(name)} value=\"{rgb}\"/>"]
    if kind == "ref":
        return [f"{indent}<ref name={quoteattr(name)} id={quoteattr(d['id'])}/>"]
    tag = _TAG.get(kind)
    if tag is None:
        raise ValueError(f"dict_to_xml: '{name}' has an unknown plugin type {kind!r}")
    ident = d.get("id", name)
    named = ' name="' + name + '"' if tag == "texture" else ""
    head = f"{indent}<{tag} type={quoteattr(kind)} id={quoteattr(ident)}{named}>"
    body = [line for k, v in d.items() if k not in ("type", "id") for line in _value(k, v, indent + "    ")]
    return [head, *body, f"{indent}</{tag}>"]


def dict_to_xml(scene_dict: dict, filename: Union[str, os.PathLike[str]]) -> None:
    """Writes ``scene_dict`` (Mitsuba's dict format, ``'type': 'scene'``) to ``filename``
    as a Mitsuba 3 XML scene that ``load_file`` reads back to the same scene."""
    if not isinstance(scene_dict, dict) or scene_dict.get("type") != "scene":
        raise ValueError("dict_to_xml: 'scene_dict' must be a dict with 'type': 'scene'")
    lines = ['<scene version="3.0.0">']
    for k, v in scene_dict.items():
        if k == "type":
            continue
        if not isinstance(v, dict):
            raise TypeError(f"dict_to_xml: scene entry '{k}' must be a plugin dict, got {type(v).__name__}")
        lines += _object(v, "    ", k)
    lines.append("</scene>")
    with open(os.fspath(filename), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
