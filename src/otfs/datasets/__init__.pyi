from ._clinical import (
    VoxelTable as VoxelTable,
)
from ._clinical import (
    VoxelTableError as VoxelTableError,
)
from ._clinical import (
    make_clinical_data as make_clinical_data,
)
from ._clinical import (
    read_voxel_table as read_voxel_table,
)
from ._clinical import (
    voxel_table_width as voxel_table_width,
)
from ._clinical import (
    write_voxel_table as write_voxel_table,
)
from ._matfile import (
    MatFileError as MatFileError,
)
from ._matfile import (
    load_mat_features as load_mat_features,
)
from ._readers import (
    DATASET_READERS as DATASET_READERS,
)
from ._readers import (
    NO_LABEL as NO_LABEL,
)
from ._readers import (
    DatasetReader as DatasetReader,
)
from ._readers import (
    DomainFeatures as DomainFeatures,
)
from ._readers import (
    check_param as check_param,
)
from ._readers import (
    get_reader as get_reader,
)
from ._readers import (
    reader_spec as reader_spec,
)
from ._toys import (
    diamond_rings as diamond_rings,
)
from ._toys import (
    gaussian_classes as gaussian_classes,
)
from ._toys import (
    moons_halves as moons_halves,
)
from ._uci import (
    UCI_DATASETS as UCI_DATASETS,
)
from ._uci import (
    load_dataset as load_dataset,
)
