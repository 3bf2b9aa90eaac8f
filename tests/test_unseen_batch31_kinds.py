"""Unseen batch 31's misses, each fixed for its kind: a second wording from another public source
must get the same cause and headline (cases 387, 388, 391, 393 and 396 hold the first,
tests/fixtures/platform/modelarts-moxing-obs-resp-exception the IPython header's). Managed
training's storage and image paths: a trainer's own refusal sentences (SageMaker, Azure ML), a
registry refusing the push that made an image missing, a FUSE mount of a bucket (s3fs and its
forks), the object stores' credential codes, and an IPython traceback's header claimed before
its exception line."""

from __future__ import annotations

import pytest

from tests.bundle_support import diagnose_text as _diagnose

# IPython's traceback header: the exception's class, then "Traceback (most recent call last)"
_IPY_RULE = "-" * 75 + "\n"


@pytest.mark.parametrize(
    "name,text,label,headline",
    [
        # SageMaker's own failure reason under its status lines (aws/sagemaker-python-sdk#1986,
        # an XGBoost image URI of another region's account)
        (
            "fit.log",
            "2020-11-10 14:46:37 Downloading - Downloading input data\n"
            "2020-11-10 14:46:37 Training - Downloading the training image...\n"
            "2020-11-10 14:47:24 Failed - Training job failed\n"
            "Cannot pull algorithm container. Either the image does not exist or its "
            "permissions are incorrect.\n",
            "image_pull_failed",
            "Cannot pull algorithm container. Either the image does not exist or its "
            "permissions are incorrect.",
        ),
        # Azure ML's job preparation quoting the daemon in one string, as the report pasted it
        # (Azure/MachineLearningNotebooks#1371: a private registry's credentials not used)
        (
            "run.log",
            'And when I start the pipeline I got: "FailedPullingImage: Unable to pull docker '
            "image\\n\\timageName: Run docker command to pull public image failed with error: "
            'error response from daemon: unauthorized: authentication required"\n',
            "image_pull_failed",
            'And when I start the pipeline I got: "FailedPullingImage: Unable to pull docker '
            "image\\n\\timageName: Run docker command to pull public image failed with error: "
            'error response from daemon: unauthorized: authentication required"',
        ),
        # a registry refusing the push, under docker push's layer lines (a deployment write-up
        # found with find_string, its repository not named by the index), before the job's
        # pull of the tag that was never pushed
        (
            "deploy.log",
            "f3afc624eb91: Waiting\n"
            "31f8aa385131: Waiting\n"
            "denied: User: arn:aws:iam::845828040396:user/2018-ecs-ecr-deployer is not "
            "authorized to perform: ecr:InitiateLayerUpload on resource: "
            "arn:aws:ecr:us-west-2:845828040396:repository/production/transportation-systems-"
            "service\n"
            'Failed to pull image "845828040396.dkr.ecr.us-west-2.amazonaws.com/production/'
            'transportation-systems-service:latest": manifest unknown\n',
            "image_pull_failed",
            "denied: User: arn:aws:iam::845828040396:user/2018-ecs-ecr-deployer is not "
            "authorized to perform: ecr:InitiateLayerUpload on resource: "
            "arn:aws:ecr:us-west-2:845828040396:repository/production/transportation-systems-"
            "service",
        ),
        # the next layer action refused (a blog's series of refusals, found with find_string)
        (
            "push.log",
            "denied: User: arn:aws:iam::1234567890:user/my-user-name is not authorized to "
            "perform: ecr:UploadLayerPart on resource: ...\n",
            "image_pull_failed",
            "denied: User: arn:aws:iam::1234567890:user/my-user-name is not authorized to "
            "perform: ecr:UploadLayerPart on resource: ...",
        ),
        # s3fs's FUSE daemon gone behind its mount point (s3fs-fuse/s3fs-fuse#2176's syslog)
        (
            "syslog",
            "May 29 09:16:58 prod-main-zemtu s3fs[2017306]: s3fs: unable to access MOUNTPOINT "
            "/var/www/zemtu/public/media: Transport endpoint is not connected\n",
            "storage_mount_failed",
            "May 29 09:16:58 prod-main-zemtu s3fs[2017306]: s3fs: unable to access MOUNTPOINT "
            "/var/www/zemtu/public/media: Transport endpoint is not connected",
        ),
        # ossfs's own wording of it (aliyun/ossfs#74's /tmp/fs.log)
        (
            "fs.log",
            "ossfs: unable to access MOUNTPOINT /data/oss: Transport endpoint is not connected\n"
            "[CRT] s3fs.cpp:set_s3fs_log_level(253): change debug level from [ERR] to [DBG]\n",
            "storage_mount_failed",
            "ossfs: unable to access MOUNTPOINT /data/oss: Transport endpoint is not connected",
        ),
        # a shell meeting the dead mount (s3fs-fuse/s3fs-fuse#635)
        (
            "shell.txt",
            "ls: cannot access /mnt/naip: Transport endpoint is not connected\n",
            "storage_mount_failed",
            "ls: cannot access /mnt/naip: Transport endpoint is not connected",
        ),
        # OBS refusing the signature, in Terraform's error (opentelekomcloud/terraform-provider-
        # opentelekomcloud#1231)
        (
            "apply.log",
            "Error: error reading bucket encryption: obs: service returned error: Status=403 "
            "Forbidden, Code=SignatureDoesNotMatch, Message=The request signature we calculated "
            "does not match \n",
            "storage_access_denied",
            "Error: error reading bucket encryption: obs: service returned error: Status=403 "
            "Forbidden, Code=SignatureDoesNotMatch, Message=The request signature we calculated "
            "does not match ",
        ),
        # S3 refusing a request stamped by a clock far off (aws/aws-cli#8662)
        (
            "cp.log",
            "upload failed: ./ckpt/model.pt to s3://some-bucket/model.pt An error occurred "
            "(RequestTimeTooSkewed) when calling the CreateMultipartUpload operation: The "
            "difference between the request time and the current time is too large.\n",
            "storage_access_denied",
            "upload failed: ./ckpt/model.pt to s3://some-bucket/model.pt An error occurred "
            "(RequestTimeTooSkewed) when calling the CreateMultipartUpload operation: The "
            "difference between the request time and the current time is too large.",
        ),
        # gcsfuse refusing its credentials at mount (GoogleCloudPlatform/gcsfuse#957)
        (
            "mount.txt",
            "daemonize.Run: readFromProcess: sub-process: mountWithArgs: mountWithConn: "
            "fs.NewServer: create file system: SetUpBucket: OpenBucket: Bad credentials for "
            'bucket "ce-vertex": permission denied\n',
            "storage_access_denied",
            "daemonize.Run: readFromProcess: sub-process: mountWithArgs: mountWithConn: "
            "fs.NewServer: create file system: SetUpBucket: OpenBucket: Bad credentials for "
            'bucket "ce-vertex": permission denied',
        ),
        # SageMaker's refusal of an empty input prefix from another notebook's CI
        # (aws/amazon-sagemaker-examples#2267), after the boto3 call that made it
        (
            "ci.log",
            "----> 3 sagemaker.create_training_job(**training_params)\n"
            "ClientError: An error occurred (ValidationException) when calling the "
            'CreateTrainingJob operation: No S3 objects found under S3 URL "s3://sagemaker-us-'
            'west-2-521695447989/image-classification/train/" given in input data source.\n',
            "input_path_not_found",
            "ClientError: An error occurred (ValidationException) when calling the "
            'CreateTrainingJob operation: No S3 objects found under S3 URL "s3://sagemaker-us-'
            'west-2-521695447989/image-classification/train/" given in input data source.',
        ),
        # the same refusal said later, as the job's failure reason (boto/boto3#1397)
        (
            "status.txt",
            "TrainingJobStatus: Failed\n"
            "FailureReason: no file found in path /opt/ml/input/data/train\n",
            "input_path_not_found",
            "FailureReason: no file found in path /opt/ml/input/data/train",
        ),
        # an IPython traceback whose header a strong pattern claims: its exception line is
        # cited (AxFoundation/strax#90's Jupyter traceback; the stored copy is cut before the
        # end, which is botocore's own wording of a NoSuchKey)
        (
            "notebook.txt",
            _IPY_RULE + "NoSuchKey                                 Traceback (most recent call "
            "last)\n"
            "<ipython-input-2-74b520fd653b> in <module>()\n"
            "----> 8 st.get_meta('170401_1024', 'raw_records')\n"
            "\n"
            "~/software/strax/strax/storage/s3.py in get_metadata(self, backend_key)\n"
            "\n"
            "NoSuchKey: An error occurred (NoSuchKey) when calling the GetObject operation: The "
            "specified key does not exist.\n",
            "input_path_not_found",
            "NoSuchKey: An error occurred (NoSuchKey) when calling the GetObject operation: The "
            "specified key does not exist.",
        ),
    ],
)
def test_second_wording(tmp_path, name, text, label, headline):
    report = _diagnose(tmp_path, name, text)
    assert report["findings"][0]["root_cause"] == label
    assert report["first_error"]["text"].rstrip() == headline.rstrip()


def test_a_pull_refusal_with_no_push_before_it_keeps_the_pull_line(tmp_path):
    """The push refusal is cited only when it is there: a job's own pull of a tag that does not
    exist is still the headline."""
    report = _diagnose(
        tmp_path,
        "job.log",
        "Job Name:  tf2-object-detection\n"
        "UnexpectedStatusException: Error for Processing job tf2-object-detection: Failed. "
        "Reason: ClientError: API error (404): manifest for 1234.dkr.ecr.us-west-2.amazonaws."
        "com/tfrecord-processing:latest not found: manifest unknown: Requested image not found\n",
    )
    assert report["findings"][0]["root_cause"] == "image_pull_failed"
    assert "manifest unknown" in report["first_error"]["text"]


def test_an_ipython_header_without_its_exception_line_is_still_cited(tmp_path):
    """A Jupyter paste cut after the header still names the failure (never silent)."""
    report = _diagnose(
        tmp_path,
        "cell.txt",
        _IPY_RULE + "MoxFileRespException                      Traceback (most recent call "
        "last)\n<ipython-input-3-e8d5ce90a452> in <module>()\n",
    )
    assert report["findings"], "silent"
    assert report["first_error"]["text"].startswith("MoxFileRespException")


def test_a_bucket_check_of_a_working_mount_is_no_error(tmp_path):
    """s3fs's debug lines of a bucket check that passed are not a failed mount."""
    report = _diagnose(
        tmp_path,
        "mount.txt",
        "[INF] s3fs.cpp:s3fs_check_service(3682): check services.\n"
        "[INF]       curl.cpp:CheckBucket(2590): check a bucket.\n"
        "[INF]       curl.cpp:RequestPerform(1823): HTTP response code 200\n",
    )
    assert all(f["root_cause"] != "storage_mount_failed" for f in report["findings"])
