"""Every `--tool-call-parser` name of the SGLang release this package pins
(0.5.23) is either served natively (a row of sglang_plugin.NATIVE_NAMES)
or listed here with the reason it is not (yet). tests/test_parser_coverage.py
compares the two against the installed SGLang's ToolCallParserEnum, so a
name SGLang adds fails that test until it is decided. Imports nothing."""
from typing import Dict

_PLANNED = "not native yet: planned (an open issue of this project); SGLang's detector parses it"

NOT_NATIVE: Dict[str, str] = {
    "beam": "template-driven: the format is the model's response template, read at run time; "
            "SGLang's parser is linear and exact at every split (measured, docs/PARSERS.md)",
    "response_template": "template-driven: the format is the model's response template, read at run time; "
                         "SGLang's parser is linear and exact at every split (measured, docs/PARSERS.md)",
}
