"""SGLang's result models (ToolCallItem, StreamingParseResult) built from
values the adapter already has in the models' own types, without running
pydantic's validation on them: an object whose state is the one
`Model(field=value, ...)` gives, for a quarter to half of the cost (each
request and chunk builds several); built in C by the core's SlotModel
(the same four slot writes, a third cheaper again), else in Python.

Taken only when the installed pydantic and SGLang classes are what this
was checked against: plain BaseModel subclasses (BaseModel's __init__,
no validators, serializers, private attributes or extra fields, the four
pydantic v2 slots), and a sample built both ways has the same state and
the same JSON. Otherwise `tool_call_item` and `parse_result` are the
validating constructors themselves. Imports SGLang (adapter only).
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional

from pydantic import BaseModel
from sglang.srt.function_call.core_types import StreamingParseResult, ToolCallItem

__all__ = ["tool_call_item", "parse_result", "FAST"]

_TCI_FIELDS = ("tool_index", "name", "parameters")
_SPR_FIELDS = ("normal_text", "calls")


_DECORATOR_KINDS = ("validators", "field_validators", "root_validators", "field_serializers", "model_serializers",
                    "model_validators", "computed_fields")


def _plain_model(cls: type, fields: tuple) -> bool:
    dec = getattr(cls, "__pydantic_decorators__", None)
    try:
        return (cls.__init__ is BaseModel.__init__ and tuple(cls.model_fields) == fields
                and dec is not None and not any(getattr(dec, k) for k in _DECORATOR_KINDS)
                and not cls.__private_attributes__ and cls.__pydantic_post_init__ is None
                and cls.model_config.get("extra") in (None, "ignore")
                and not cls.model_config.get("validate_assignment")
                and not cls.model_config.get("frozen"))
    except Exception:
        return False


def _builders() -> Optional[tuple]:
    slots = BaseModel.__dict__
    try:
        set_dict = slots["__dict__"].__set__
        set_fields = slots["__pydantic_fields_set__"].__set__
        set_extra = slots["__pydantic_extra__"].__set__
        set_private = slots["__pydantic_private__"].__set__
    except (KeyError, AttributeError):
        return None
    if not (_plain_model(ToolCallItem, _TCI_FIELDS) and _plain_model(StreamingParseResult, _SPR_FIELDS)):
        return None
    try:  # the same steps in C (the core's SlotModel): a third of the cost
        from sglang_toolparse._core import SlotModel

        descriptors = tuple(slots[k] for k in ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__",
                                                "__pydantic_private__"))
        return SlotModel(ToolCallItem, descriptors, _TCI_FIELDS), SlotModel(StreamingParseResult, descriptors,
                                                                              _SPR_FIELDS)
    except (ImportError, TypeError, ValueError):
        pass
    new_tci = ToolCallItem.__new__
    new_spr = StreamingParseResult.__new__

    def tool_call_item(tool_index: int, name: Optional[str], parameters: str) -> Any:
        obj = new_tci(ToolCallItem)
        set_dict(obj, {"tool_index": tool_index, "name": name, "parameters": parameters})
        set_fields(obj, {"tool_index", "name", "parameters"})
        set_extra(obj, None)
        set_private(obj, None)
        return obj

    def parse_result(normal_text: str, calls: List[Any]) -> Any:
        obj = new_spr(StreamingParseResult)
        set_dict(obj, {"normal_text": normal_text, "calls": calls})
        set_fields(obj, {"normal_text", "calls"})
        set_extra(obj, None)
        set_private(obj, None)
        return obj

    return tool_call_item, parse_result


def _same(a: Any, b: Any) -> bool:
    return (type(a) is type(b) and a.__getstate__() == b.__getstate__() and a == b
            and a.model_dump_json() == b.model_dump_json() and a.model_dump() == b.model_dump())


def _checked() -> Optional[tuple]:
    try:
        built = _builders()
        if built is None:
            return None
        tci, spr = built
        for args in ((0, "f", '{"a": 1}'), (3, None, "")):
            if not _same(tci(*args), ToolCallItem(tool_index=args[0], name=args[1], parameters=args[2])):
                return None
        calls = [tci(0, "f", "{}")]
        if not _same(spr("x", calls), StreamingParseResult(normal_text="x", calls=[ToolCallItem(
                tool_index=0, name="f", parameters="{}")])) or not _same(spr("", []), StreamingParseResult(
                normal_text="", calls=[])):
            return None
        return built
    except Exception:
        return None


def _validating_tci(tool_index: int, name: Optional[str], parameters: str) -> Any:
    return ToolCallItem(tool_index=tool_index, name=name, parameters=parameters)


def _validating_spr(normal_text: str, calls: List[Any]) -> Any:
    return StreamingParseResult(normal_text=normal_text, calls=calls)


_built = _checked()
FAST = _built is not None
tool_call_item: Callable[[int, Optional[str], str], Any] = _built[0] if _built else _validating_tci
parse_result: Callable[[str, List[Any]], Any] = _built[1] if _built else _validating_spr
