"""YAML loading that refuses a key given twice in one mapping.

PyYAML's safe_load keeps the last of two equal keys without a word, so a
second `master:` section silently replaces the first. This loader checks
every mapping, at any depth, and names the line of the repeated key.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError

_MERGE_TAG = "tag:yaml.org,2002:merge"


class DuplicateKey(ConstructorError):
    """A mapping names the same key twice; `problem_mark` is the second one."""


class StrictSafeLoader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first_line: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue  # `<<: *base` merges; keys given next to it override on purpose
            key = self.construct_object(key_node, deep=True)
            try:
                earlier = first_line.get(key)
            except TypeError:
                continue  # unhashable: the base constructor reports it
            if earlier is not None:
                problem = f"duplicate key {key!r} (first at line {earlier})"
                raise DuplicateKey(None, None, problem, key_node.start_mark)
            first_line[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)


def load_strict(text: str) -> Any:
    """Parse one YAML document like yaml.safe_load, but duplicate keys are errors."""
    return yaml.load(text, Loader=StrictSafeLoader)  # a SafeLoader subclass: no arbitrary objects
