"""The tools' arguments: one model each, with every parameter described for the agent.

Unknown arguments are refused (``extra="forbid"``), and a refusal names the argument
and what is wrong with it, never pydantic's own wording or links, nor the value.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.json_schema import GenerateJsonSchema

from contextls.protocol import RenderFormat, SearchMode
from contextls_client.mcp.words import cut

TextKind = Literal["text", "code", "error", "repl-history"]
"""The kinds an agent's text can be (protocol ``ItemKind`` but ``file``, which is
``add_file``'s, and ``custom``, which is for editors' own items)."""

ERRORS_NAMED: Final = 5

PATH = (
    "A path relative to the workspace root (the folder the session serves), or an "
    "absolute path inside it."
)
PIN = "Keep it from being evicted when the window is full (default false)."
IDS = "Item ids such as ctx-12 (from list, get_context or search_archive)."


class Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NoArguments(Arguments):
    pass


class GetContextArguments(Arguments):
    format: RenderFormat = Field(
        "markdown",
        description="markdown (default), xml, or json (the items with their ids and flags).",
    )
    max_tokens: Annotated[int, Field(ge=1)] | None = Field(
        None,
        description="At most this many tokens (as the window counts them); pinned items "
        "come first. Default: the window's own budget.",
    )
    query: Annotated[str, Field(min_length=1, max_length=10_000)] | None = Field(
        None,
        description='Also include the archived items relevant to this text, under "Relevant '
        'history". Describe what you need in your own words, or give an identifier.',
    )
    auto_retrieve: bool = Field(
        False,
        description="With query: fill the tokens the window leaves with every archived item "
        "close enough in meaning.",
    )


class AddFileArguments(Arguments):
    path: str = Field(
        description=f"A file, a folder, or a glob such as src/**/*.py. {PATH} A folder or glob "
        "adds each file it holds, leaving out hidden, binary, vendored (node_modules, "
        ".venv…) and credential files.",
    )
    pin: bool = Field(False, description=PIN)
    force: bool = Field(
        False,
        description="For a folder or glob: add it even when making room evicts more than half "
        "of the window. Ask the person first (default false).",
    )


class AddRegionArguments(Arguments):
    path: str = Field(description=f"The file. {PATH}")
    start_line: int = Field(
        description="The first line to add, 1-based (a file's first line is 1)."
    )
    end_line: int = Field(description="The last line to add, 1-based and included.")
    pin: bool = Field(False, description=PIN)


class AddTextArguments(Arguments):
    content: Annotated[str, Field(min_length=1)] = Field(description="The text to add.")
    kind: TextKind = Field(
        "text",
        description="What the text is: text (a note, a decision; default), code, error (an "
        "error message or stack trace), or repl-history (a shell or REPL transcript).",
    )
    pin: bool = Field(False, description=PIN)


class SearchArguments(Arguments):
    query: Annotated[str, Field(min_length=1, max_length=10_000)] = Field(
        description="What you need, in your own words, or an exact identifier or error message."
    )
    limit: Annotated[int, Field(ge=1, le=100)] = Field(
        10, description="At most this many hits, 1 to 100 (default 10)."
    )
    mode: SearchMode | None = Field(
        None,
        description="semantic: by meaning only; keyword: by words only; hybrid: both. Default: "
        "hybrid when the server can search by meaning, else keyword.",
    )


class IdsArguments(Arguments):
    ids: Annotated[list[str], Field(min_length=1, max_length=1000)] = Field(description=IDS)


class RefreshArguments(Arguments):
    ids: Annotated[list[str], Field(min_length=1, max_length=1000)] | None = Field(
        None, description=f"{IDS} Default: every stale item."
    )


class PinArguments(Arguments):
    id: str = Field(description="An item id such as ctx-12 (from list or get_context).")
    pinned: bool = Field(True, description="true pins it (default); false unpins it.")


class _Plain(GenerateJsonSchema):
    """Schemas without the titles pydantic derives from names: they repeat the name."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def input_schema(model: type[Arguments]) -> dict[str, Any]:
    """The JSON schema of ``model``, in as few tokens as it takes to be exact.

    An optional parameter is simply left out; its ``null`` alternative is dropped.
    """
    schema = model.model_json_schema(schema_generator=_Plain)
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        alternatives = prop.get("anyOf")
        if alternatives and {"type": "null"} in alternatives:
            rest = [a for a in alternatives if a != {"type": "null"}]
            if len(rest) == 1:
                del prop["anyOf"]
                prop.update(rest[0])
            if prop.get("default", ...) is None:
                del prop["default"]
    schema.setdefault("properties", {})
    return schema


def parse(model: type[Arguments], given: dict[str, Any] | None) -> Arguments:
    """The arguments as ``model``; a ``ValueError`` in words when they do not fit."""
    try:
        return model.model_validate(given or {})
    except ValidationError as error:
        raise ValueError(explain(error, model)) from None


def explain(error: ValidationError, model: type[Arguments]) -> str:
    problems = []
    for problem in error.errors(include_url=False, include_input=False)[:ERRORS_NAMED]:
        name = ".".join(str(part) for part in problem["loc"]) or "arguments"
        if problem["type"] == "extra_forbidden":
            takes = ", ".join(model.model_fields) or "none"
            problems.append(f"unknown argument {cut(name, 60)!r} (it takes: {takes})")
        elif problem["type"] == "missing":
            problems.append(f"{name} is missing")
        else:
            problems.append(f"{name}: {problem['msg']}")
    more = error.error_count() - ERRORS_NAMED
    return "; ".join(problems) + (f"; and {more} more" if more > 0 else "")
