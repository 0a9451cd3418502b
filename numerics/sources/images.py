"""Image inputs for the vision models (:mod:`numerics.sources.onnx_attention`): the bundled
photographs, or the user's files (``attnbounds rollout --images DIR|FILE[,FILE...]``).

Default corpus (:func:`default_images`, name :data:`DEFAULT_NAME`): a fixed, ordered list of the
photographs that ship inside installed wheels, read as data: scikit-image's ``skimage/data`` folder
(:data:`SKIMAGE_PHOTOS`: its photographs, not its synthetic test patterns, silhouettes or logos) and
scikit-learn's ``sklearn/datasets/images`` (:data:`SKLEARN_PHOTOS`: the two of
``load_sample_images``), both located with ``importlib.util.find_spec`` (never imported for it). A
listed file the installed version lacks is skipped, and the corpus notes say so; each input's
``source`` names the package it came from.

User images (:func:`read_images`): a folder (its ``*.png``, ``*.jpg``, ``*.jpeg`` files, in sorted
name order, not recursive) or a comma-separated list of files. A file that does not exist, is
empty or cannot be decoded as an image, a folder with no image in it, is an
:class:`~theory.errors.InvalidInput` naming it; so is an empty list, and an image too large to
decode within the memory budget (:func:`check_size`, from its header, before any pixel is read).

Each input (:class:`ImageInput`) is named by its file stem and keyed by the sha256 of the file's
bytes (16 hex digits, as a text's key: :func:`numerics.sources.corpus.text_hash`); the same bytes
listed twice are measured once (a note says so).

Pixels (:func:`pixels`): decoded by scikit-image's ``io.imread``; grayscale becomes three equal
channels, RGBA becomes RGB (``skimage.color.rgba2rgb``: alpha composited on white), a
gray + alpha image its gray channel; values scaled to [0, 1] (``img_as_float``), then resized to the
model's input size ``(H, W)`` with ``skimage.transform.resize(order=1, anti_aliasing=True)`` (the
whole image, aspect ratio not kept, no crop), then normalised per channel ``(x - mean) / std``, in
float64, and rounded once to float32, as ``(1, 3, H, W)``.

>>> white = np.full((4, 6), 255, dtype=np.uint8)              # a gray image, all white
>>> t = to_tensor(white, (2, 2), (0.5, 0.5, 0.5), (0.5, 0.5, 0.5))
>>> t.shape, t.dtype, t[0, :, 0, 0].tolist()
((1, 3, 2, 2), dtype('float32'), [1.0, 1.0, 1.0])
>>> float(to_tensor(np.zeros((3, 3, 4), dtype=np.uint8), (2, 2), IMAGENET_MEAN, IMAGENET_STD)[0, 0, 0, 0])  # RGBA
2.248908281326294
"""
from __future__ import annotations

import hashlib
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from theory.errors import InvalidInput

DEFAULT_NAME = "bundled-photos"      # the default image corpus (part of every image model's campaign name)
SUFFIXES = (".png", ".jpg", ".jpeg")
# the photographs of scikit-image's data folder, in the corpus's order (the quick plan reads the first few)
SKIMAGE_PHOTOS = ("chelsea.png", "astronaut.png", "coffee.png", "rocket.jpg", "camera.png", "coins.png",
                  "motorcycle_left.png", "hubble_deep_field.jpg", "retina.jpg", "moon.png", "ihc.png", "cell.png",
                  "clock_motion.png", "page.png", "brick.png", "grass.png", "gravel.png")
SKLEARN_PHOTOS = ("china.jpg", "flower.jpg")     # sklearn.datasets.load_sample_images' files
BUNDLED_COUNT = len(SKIMAGE_PHOTOS) + len(SKLEARN_PHOTOS)   # the bundled photographs (`--full` reads them all)
BUNDLES = (("scikit-image", "skimage", "data", SKIMAGE_PHOTOS),
           ("scikit-learn", "sklearn", "datasets/images", SKLEARN_PHOTOS))
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
# peak bytes a pixel while an image is decoded (uint8), made float64 RGB and resized with anti-aliasing
# (to_tensor): 80 measured on a 3000 x 3000 PNG; an image over memory_budget() / this is refused unread
BYTES_PER_PIXEL = 80
RESIZE = "skimage.transform.resize(order=1, anti_aliasing=True) to the model's input size, aspect not kept, no crop"


@dataclass(frozen=True)
class ImageInput:
    """One input image: its id (the file stem), the file, and where it came from."""

    id: str
    path: str
    source: str      # the package of a bundled photograph, else the folder the file lies in
    sha: str         # sha256 of the file's bytes, 16 hex digits


@dataclass
class ImageCorpus:
    """Image inputs, in order, with what was done to get them (skipped files, duplicates)."""

    name: str
    inputs: list[ImageInput]
    notes: list[str] = field(default_factory=list)


def file_sha(path: Path) -> str:
    """sha256 of the file's bytes, 16 hex digits (an empty or unreadable file: InvalidInput)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InvalidInput(f"image {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise InvalidInput(f"image {str(path)!r} is a folder, not a file") from None
    except OSError as exc:
        raise InvalidInput(f"image {str(path)!r} cannot be read ({exc.strerror})") from None
    if not data:
        raise InvalidInput(f"image {str(path)!r} is empty")
    return hashlib.sha256(data).hexdigest()[:16]


def check_size(path: str | Path) -> None:
    """Refuse, from the file's header alone (``PIL.Image.open`` reads no pixels), an image whose
    decoding and resizing (:func:`to_tensor`: about :data:`BYTES_PER_PIXEL` bytes a pixel at the
    peak) would need more than the memory budget (:func:`numerics.device.memory_budget`): one line
    naming the file, its size and the largest that fits. A header PIL cannot read is left to
    :func:`decode`, which refuses it in its own words."""
    import warnings

    from PIL import Image

    from numerics.device import BUDGET_VARIABLE, memory_budget

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # PIL's own warning about large images: said below, in one line
            with Image.open(str(path)) as im:
                w, h = im.size
    except Exception:
        return
    budget = memory_budget()
    most = budget // BYTES_PER_PIXEL
    if w * h > most:
        raise InvalidInput(f"image {str(path)!r} is {w} x {h} pixels ({w * h / 1e6:.1f} megapixels): decoding and "
                           f"resizing it needs about {w * h * BYTES_PER_PIXEL / 2 ** 30:.1f} GiB, over the memory budget "
                           f"of {budget / 2 ** 30:.3g} GiB (at most {most / 1e6:.1f} megapixels; scale it down, or set "
                           f"{BUDGET_VARIABLE} in GiB)")


def decode(path: str | Path) -> np.ndarray:
    """The image's pixels as ``io.imread`` decodes them, once its size is known to fit
    (:func:`check_size`); a file that is not an image: InvalidInput."""
    import warnings

    from skimage import io

    check_size(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            img = np.asarray(io.imread(str(path)))
    except Exception as exc:      # PIL / imageio errors of every kind: not an image we can read
        raise InvalidInput(f"image {str(path)!r}: not a readable PNG/JPEG image "
                           f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]})") from None
    if img.ndim not in (2, 3) or (img.ndim == 3 and img.shape[-1] not in (1, 2, 3, 4)) or min(img.shape[:2]) < 1:
        raise InvalidInput(f"image {str(path)!r}: decoded to shape {img.shape}, not an H x W [x 1-4 channels] image")
    if img.dtype == object or not (np.issubdtype(img.dtype, np.number) or img.dtype == bool):
        raise InvalidInput(f"image {str(path)!r}: pixels of type {img.dtype}, not numbers")
    return img


def rgb(img: np.ndarray) -> np.ndarray:
    """(H, W, 3) float64 in [0, 1]: grayscale -> three channels, RGBA -> RGB (on white), gray+alpha -> gray."""
    from skimage.color import rgba2rgb
    from skimage.util import img_as_float

    x = img_as_float(img)
    if x.ndim == 3 and x.shape[-1] == 4:
        x = rgba2rgb(x)
    elif x.ndim == 3 and x.shape[-1] in (1, 2):
        x = x[..., 0]
    if x.ndim == 2:
        x = np.stack([x] * 3, axis=-1)
    return np.clip(x.astype(np.float64), 0.0, 1.0)


def to_tensor(img: np.ndarray, size: tuple[int, int], mean: Sequence[float], std: Sequence[float]) -> np.ndarray:
    """``(1, 3, H, W)`` float32: :func:`rgb`, resized to ``size`` (:data:`RESIZE`), ``(x - mean) / std``."""
    from skimage.transform import resize

    x = rgb(img)
    if x.shape[:2] != tuple(size):
        x = resize(x, tuple(size), order=1, anti_aliasing=True, mode="reflect")
    x = (x - np.asarray(mean, dtype=np.float64)) / np.asarray(std, dtype=np.float64)
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None], dtype=np.float32)


def pixels(item: ImageInput, size: tuple[int, int], mean: Sequence[float], std: Sequence[float]) -> np.ndarray:
    """The model input of one image (see the module docstring); the file must still hold the bytes
    it was keyed by (an image changed since the corpus was read is refused, not measured under the
    old key)."""
    path = Path(item.path)
    if file_sha(path) != item.sha:
        raise InvalidInput(f"image {item.path!r} changed since it was read (sha256 {item.sha} expected)")
    return to_tensor(decode(path), size, mean, std)


def _package_dir(package: str) -> Optional[Path]:
    spec = importlib.util.find_spec(package)       # locate only
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _unique(inputs: list[ImageInput], notes: list[str]) -> list[ImageInput]:
    out, seen = [], {}
    for t in inputs:
        if (t.id, t.sha) in seen:
            notes.append(f"{t.path}: the same bytes as {seen[(t.id, t.sha)]}, measured once")
            continue
        seen[(t.id, t.sha)] = t.path
        out.append(t)
    return out


def default_images(limit: Optional[int] = None) -> ImageCorpus:
    """The bundled photographs (see the module docstring), the first ``limit`` of them."""
    inputs: list[ImageInput] = []
    notes: list[str] = []
    for label, package, sub, names in BUNDLES:
        folder = _package_dir(package)
        missing = []
        for name in names:
            path = None if folder is None else folder / sub / name
            if path is None or not path.is_file():
                missing.append(name)
                continue
            decode(path)              # a damaged install is refused here, naming the file
            inputs.append(ImageInput(id=Path(name).stem, path=str(path), source=label, sha=file_sha(path)))
        if missing:
            notes.append(f"{label} ({package}/{sub}) lacks {len(missing)} of the listed photographs: "
                         f"{', '.join(missing)}")
    inputs = _unique(inputs, notes)
    if not inputs:
        raise InvalidInput(f"the {DEFAULT_NAME} corpus found no photograph (scikit-image's data folder, "
                           "scikit-learn's sample images): reinstall them with `make setup`")
    if limit is not None:
        inputs = inputs[:limit]
    counts = {label: sum(t.source == label for t in inputs) for label, *_ in BUNDLES}
    notes.insert(0, f"{len(inputs)} photographs bundled with installed packages: "
                    + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return ImageCorpus(DEFAULT_NAME, inputs, notes)


def read_images(spec: str, limit: Optional[int] = None) -> ImageCorpus:
    """``--images DIR`` or ``--images FILE[,FILE...]`` (see the module docstring)."""
    parts = [s.strip() for s in str(spec).split(",")]
    if not any(parts):
        raise InvalidInput(f"--images {spec!r}: no file or folder named")
    if any(not s for s in parts):
        raise InvalidInput(f"--images {spec!r}: an empty name in the comma-separated list")
    notes: list[str] = []
    if len(parts) == 1 and Path(parts[0]).expanduser().is_dir():
        folder = Path(parts[0]).expanduser()
        files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in SUFFIXES)
        if not files:
            raise InvalidInput(f"image folder {str(folder)!r} holds no .png/.jpg/.jpeg file")
        name = folder.resolve().name or str(folder)
    else:
        files = [Path(s).expanduser() for s in parts]
        for f in files:
            if f.is_dir():
                raise InvalidInput(f"image {str(f)!r} is a folder: give a folder alone, or a list of files")
        name = files[0].name if len(files) == 1 else f"{files[0].stem}+{len(files) - 1}"
    inputs = []
    for f in files:
        sha = file_sha(f)
        decode(f)
        inputs.append(ImageInput(id=f.stem, path=str(f), source=str(f.parent), sha=sha))
    inputs = _unique(inputs, notes)
    if limit is not None:
        inputs = inputs[:limit]
    notes.insert(0, f"{len(inputs)} image(s) from {spec}")
    return ImageCorpus(name, inputs, notes)


def load_images(spec: Optional[str] = None, limit: Optional[int] = None) -> ImageCorpus:
    """The bundled photographs when ``spec`` is None (or :data:`DEFAULT_NAME` and no such file
    exists), else :func:`read_images`."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InvalidInput(f"limit must be a positive integer, got {limit!r}")
    if spec is None or (str(spec) == DEFAULT_NAME and not Path(spec).exists()):
        return default_images(limit)
    return read_images(spec, limit)


def describe(item: Any) -> dict:
    """The provenance of one image input (its id, source package or folder name, file hash)."""
    return dict(input=item.id, source=item.source, text_sha=item.sha, image=Path(item.path).name)
