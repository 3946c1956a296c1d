from .acquisition import (
    AcquisitionError as AcquisitionError,
)
from .acquisition import (
    HashMismatchError as HashMismatchError,
)
from .acquisition import (
    MissingDataError as MissingDataError,
)
from .acquisition import (
    Sources as Sources,
)
from .acquisition import (
    acquire as acquire,
)
from .cache import (
    CacheError as CacheError,
)
from .cache import (
    FeatureCache as FeatureCache,
)
from .cache import (
    read_cache as read_cache,
)
from .cache import (
    write_cache as write_cache,
)
from .manifest import (
    Manifest as Manifest,
)
from .manifest import (
    ManifestEntry as ManifestEntry,
)
from .manifest import (
    git_blob_sha1 as git_blob_sha1,
)
from .manifest import (
    read_manifest as read_manifest,
)
