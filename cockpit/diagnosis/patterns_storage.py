"""Object storage as a training job meets it: OBS/S3/OSS/GCS answers through an SDK, MoXing, a
FUSE mount (s3fs and its forks ossfs and obsfs, gcsfuse) or a managed trainer's own data
channel (SageMaker). In precedence order, spliced into :data:`cockpit.diagnosis.patterns.PATTERNS`
where the containers' patterns end, so the storage words of a line decide before generic ones.

The storage answer's own code decides the kind: a missing key or bucket is a wrong input path,
a refused signature or key a credentials problem (access), an invalid bucket name a malformed
path, a FUSE mount whose bucket check failed a mount that never came up.
"""

from __future__ import annotations

from cockpit.diagnosis.pattern_base import Pattern
from cockpit.diagnosis.pattern_base import spec as _p

OBJECT_STORAGE: tuple[Pattern, ...] = (
    # Python opened an OBS/S3 URL as a local file: the path, not the data, is wrong
    _p(
        "py_obs_url_open",
        r"No such file or directory: '(?:s3|obs)://",
        "storage_path_invalid",
        tier=2,
    ),
    # a FUSE mount of a bucket (s3fs and its forks ossfs/obsfs print the same CheckBucket lines)
    # that never came up: the bucket check at mount time failed (the store's code on the next
    # lines says why), or the FUSE daemon behind a mount point is gone ("Transport endpoint is
    # not connected" on every access); before the store's codes, which the check's answer holds
    _p(
        "fuse_bucket_mount",
        r"Check bucket failed|CheckBucket\(\d+\)[^\n]*(?:failed|[Ee]rror)|"
        r"\b(?:s3fs|ossfs|obsfs|goofys|gcsfuse|blobfuse2?|mount-s3)\S*: [^\n]*"
        r"(?:unable to access MOUNTPOINT|Transport endpoint is not connected)|"
        r"cannot (?:access|open directory) [^\n]*: Transport endpoint is not connected",
        "storage_mount_failed",
        tier=1,
    ),
    _p(
        "obs_not_found",
        r"^\s*stat:\s*404\b|\bNoSuchKey\b|\bNoSuchBucket\b|MoxFileNotExistsException|"
        r"The specified key does not exist|An error occurred \((?:404|NoSuchKey)\) when calling",
        "input_path_not_found",
        tier=2,
    ),
    # the store refused the request's signature or key (a wrong secret, a key of another
    # account or region, a clock far off: S3/OBS/OSS share these codes), or gcsfuse's bucket
    # open refused its credentials: access, whatever the HTTP status printed beside it
    _p(
        "object_store_credentials",
        r"\bSignatureDoesNotMatch\b|The request signature we calculated does not match|"
        r"\bInvalidAccessKeyId\b|The (?:AWS |OSS )?Access Key Id you provided does not exist|"
        r"\bRequestTimeTooSkewed\b|Bad credentials for bucket",
        "storage_access_denied",
        tier=2,
    ),
    _p(
        "obs_denied",
        r"^\s*stat:\s*403\b|\bAccessDenied\b|403 Forbidden|"
        r"An error occurred \((?:403|AccessDenied)\) when calling|\(403\)[^\n]*Forbidden",
        "storage_access_denied",
        tier=2,
    ),
    # a bucket name the store rejects (a bucket's own domain given as the endpoint prefixes it
    # twice, upper case, underscores): the path is malformed, not missing
    _p(
        "bucket_name_invalid",
        r"\bInvalidBucketName\b|The specified bucket is not valid",
        "storage_path_invalid",
        tier=2,
    ),
    # a managed trainer's own refusal of an input channel (SageMaker checks the S3 prefix at
    # CreateTrainingJob, then downloads it): the data is not where the job points; after the
    # store's refusals, which a download's message may carry
    _p(
        "trainer_input_channel_empty",
        r"No S3 objects found under S3 URL|[Nn]o file found in path /opt/ml/input/data|"
        r"Data download failed:?[^\n]*(?:does not exist|not found|\b404\b)",
        "input_path_not_found",
        tier=2,
    ),
    _p(
        "obs_connection",
        r"Unable to connect to endpoint|obs\S* .*(?:Connection timeout|Read timeout)|"
        r"EndpointConnectionError|Could not connect to the endpoint URL",
        "storage_connection_error",
        tier=2,
    ),
)
