"""A relevance set over this repository's own server code (every function a document).

The items are the source of every function and method of ``server/contextls``
(outside ``semantic/``) as it was at commit 5a7a8b4, frozen in ``corpus.json``
so the set does not move with the code: 316 documents, added as an editor
would (kind ``code`` with the path and symbol). The queries are written by
hand: paraphrases a person would type, bare identifiers, and error-message
fragments. Each names the one function it wants by ``path:name``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "corpus.json"


@dataclass(frozen=True)
class Document:
    key: str  # "path:name", "#2" appended to repeated names in one file
    path: str
    symbol: str
    content: str


def documents() -> list[Document]:
    return [Document(**entry) for entry in json.loads(CORPUS.read_text(encoding="utf-8"))]


QUERIES: list[tuple[str, str]] = [
    # paraphrases
    ("turn a file URI into a filesystem path", "files.py:uri_to_path"),
    ("refuse file contents that are not text", "files.py:check_text"),
    ("format a big number with comma separators for people", "core/errors.py:thousands"),
    ("short excerpt of a search result around the matching words", "store.py:snippet"),
    ("convert a UTF-16 character offset to a python string index", "core/text.py:utf16_to_index"),
    ("get the text between a start and an end editor position", "core/text.py:slice_range"),
    (
        "combine overlapping regions of one file into a single region",
        "core/window.py:_merge_regions",
    ),
    ("which item would be dropped first when room is needed", "core/window.py:next_eviction"),
    ("change the token encoding and count every item again", "core/window.py:retokenize"),
    ("load the BPE encoding offline without downloading", "core/tokens.py:load_encoding"),
    (
        "keep the first message and remove an even number of older ones",
        "core/conversation.py:truncate_conversation",
    ),
    ("how many tokens does a picture cost", "core/conversation.py:_image_tokens"),
    (
        "which earlier messages must the new summary cover",
        "core/conversation.py:_messages_to_summarize",
    ),
    (
        "build the endpoint address for chat completions from a base url",
        "condense.py:chat_completions_url",
    ),
    ("check the condensing settings and read the secret API key", "condense.py:resolve_endpoint"),
    ("how much money the provider says the call cost", "condense.py:_usage_cost"),
    ("pick a code fence longer than any backtick run in the content", "core/render.py:fence_for"),
    ("a readable name for an item like the path and its line span", "core/items.py:make_label"),
    ("map the numeric kind of a symbol to its name", "lsp/handlers.py:_symbol_kind"),
    (
        "decode request parameters into a struct, reporting the bad field",
        "lsp/errors.py:decode_params",
    ),
    (
        "does the buffered input stop in the middle of a message body",
        "lsp/framing.py:inside_a_message",
    ),
    ("serve exactly one client over a loopback socket", "lsp/transport.py:serve_tcp"),
    ("remove the outer contextls key from the configuration object", "settings.py:unwrap"),
    ("generate the JSON schema document from the protocol types", "schema.py:build"),
    ("move evicted entries to the archive, newest version wins", "store.py:archive"),
    ("how many archived rows still wait for the full-text index", "store.py:backlog"),
    ("take the database write lock unless this connection already has it", "store.py:begin"),
    ("reload the window if another process modified the workspace", "workspace.py:catch_up"),
    (
        "flag items as out of date after the user edited the document",
        "workspace.py:document_changed",
    ),
    ("resolve symlinks and make the path relative to the project root", "workspace.py:locate"),
    ("find which workspace folder a request belongs to", "service.py:workspace"),
    ("write all workspaces' pending changes in one transaction", "service.py:commit"),
    ("apply the client's configuration, warning about invalid keys", "service.py:configure"),
    ("send an HTTP POST and read the reply with a time limit", "condense.py:_post"),
    (
        "summarise the conversation with the model but never throw",
        "condense.py:summarize_with_endpoint",
    ),
    ("run a function once the queued responses have been written out", "pacing.py:after_answers"),
    (
        "flatten rich content blocks into plain text, images become a placeholder",
        "condense.py:_content_text",
    ),
    (
        "check the shape of the messages list before truncating",
        "core/conversation.py:validate_messages",
    ),
    ("a regular region of a file, not the whole file", "core/items.py:is_region"),
    ("push the status of the workspace folders so status bars fill in", "service.py:announce"),
    # identifiers
    ("index_backlog", "store.py:index_backlog"),
    ("_touching_closure", "core/window.py:_touching_closure"),
    ("truncate_conversation_if_needed", "core/conversation.py:truncate_conversation_if_needed"),
    ("read_text_file", "files.py:read_text_file"),
    # error messages
    ("does not exist", "files.py:read_text_file"),
    ("is binary or not UTF-8 text", "files.py:check_text"),
]
