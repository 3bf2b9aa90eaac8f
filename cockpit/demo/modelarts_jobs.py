"""What the demo's ModelArts project contains: training jobs and dedicated pools.

Each job is a timeline of phases relative to the demo start, so the project evolves with
the clock (a queued job starts after five minutes). :mod:`cockpit.demo.modelarts` turns
these into the wire JSON the SDK returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta, timezone

CST = timezone(timedelta(hours=8))  # the console's and the events' time zone (Beijing)
ID = "5b1c0a4e-7d21-4f3a-9c11-{:012d}"
SWR = "swr.cn-north-4.myhuaweicloud.com"
POOL_DEDI = "pool-7f3a9c21"
POOL_TEAM = "pool-2c8e41d0"

FLAVORS = {
    # flavor id -> (cpus, gpus, memory GB, gpu product)
    "modelarts.p3.large.public": (8, 1, 64, "NVIDIA-V100"),
    "modelarts.vm.gpu.4a100": (32, 4, 256, "NVIDIA-A100"),
    "modelarts.vm.gpu.1a100": (8, 1, 64, "NVIDIA-A100"),
    "modelarts.vm.gpu.8v100": (64, 8, 512, "NVIDIA-V100"),
    "modelarts.vm.gpu.1v100": (8, 1, 64, "NVIDIA-V100"),
    "modelarts.vm.cpu.8u": (8, 0, 32, ""),
}


@dataclass(frozen=True)
class MaJob:
    """One training job. Times are seconds relative to the demo start.

    ``phases``: (from, phase, secondary_phase); ``stages``: (name, start, end or None);
    ``events``: (at, level, source, message); ``log``: (at, line) of worker-0's log.
    """

    n: int
    name: str
    created: int
    phases: tuple[tuple[int, str, str], ...]
    stages: tuple[tuple[str, int, int | None], ...]
    events: tuple[tuple[int, str, str, str], ...] = ()
    log: tuple[tuple[int, str], ...] = ()
    flavor: str = "modelarts.vm.gpu.1a100"
    pool: str = ""  # "" = public pool
    image: str = f"{SWR}/ml-team/pytorch-train:2.1.0-cuda12.1"
    command: str = "cd /home/ma-user/modelarts/user-job-dir/code && python train.py"
    inputs: tuple[tuple[str, str, str], ...] = ()  # (name, obs_url, local_dir)
    outputs: tuple[tuple[str, str, str], ...] = ()
    params: tuple[tuple[str, str], ...] = ()
    volumes: tuple[dict, ...] = ()
    exit_code: int | None = None
    exit_message: str = ""
    user: str = "ml-ops"
    nodes: int = 1
    extra: dict = field(default_factory=dict)

    @property
    def job_id(self) -> str:
        return ID.format(self.n)

    def phase_at(self, t: int) -> tuple[int, str, str] | None:
        cur = None
        for p in self.phases:
            if p[0] <= t:
                cur = p
        return cur


def _pod(j: int, reason: str, msg: str) -> str:
    return f"[Pod: modelarts-job-{ID.format(j)}-worker-0] {reason}: {msg}"


def _progress(
    start: int, count: int, every: int = 30, ansi: bool = False
) -> tuple[tuple[int, str], ...]:
    out = []
    for k in range(count):
        loss = 2.3 / (1 + k / 20) + 0.2
        tag = "\x1b[36mINFO\x1b[0m" if ansi else "INFO"
        out.append(
            (
                start + k * every,
                f"{tag} epoch {1 + k // 100} step {k % 100 * 10:4d} loss={loss:.4f} lr=0.0010",
            )
        )
    return tuple(out)


def _startup(start: int, pip_s: int, stuck: bool = False) -> tuple[tuple[int, str], ...]:
    """worker-0's init log (``{ts}`` = the line's time): code, mount, pip, rendezvous, start.

    ``stuck``: pip cannot reach the mirror and retries, then goes silent (the baseline scenario).
    """
    mirror = "https://repo.huaweicloud.com/repository/pypi/simple"
    head = (
        (
            start,
            "{ts} [ModelArts Service Log][init] task worker-0 starting, image "
            "pytorch-train:2.1.0-cuda12.1",
        ),
        (
            start + 3,
            "{ts} [init] downloading code from obs://ml-code/gpt2-zh/ to "
            "/home/ma-user/modelarts/user-job-dir",
        ),
        (start + 9, "{ts} [init] code downloaded: 38 files, 2.1 MB"),
        (
            start + 10,
            "{ts} [init] mounting obs://ml-data/zh-corpus/ at "
            "/home/ma-user/modelarts/inputs/data_url_0",
        ),
        (start + 14, "{ts} [init] mount ready"),
        (start + 15, f"{{ts}} [init] pip install -r requirements.txt -i {mirror}"),
    )
    if stuck:
        return head + tuple(
            (
                start + 15 + 75 * k,
                f"{{ts}} WARNING: Retrying (Retry(total={4 - k}, connect=None, read=None)) after "
                "connection broken by 'ConnectTimeoutError(\"Connection to repo.huaweicloud.com "
                "timed out. (connect timeout=15)\")': /repository/pypi/simple/transformers/",
            )
            for k in range(1, 4)
        )
    t = start + 15 + pip_s
    return head + (
        (t, "{ts} [init] installed 14 packages (transformers 4.44.2, datasets 2.20.0, ...)"),
        (t + 1, "{ts} [init] torch.distributed rendezvous: 1 node(s), MASTER_ADDR=worker-0"),
        (t + 3, "{ts} [init] rendezvous complete"),
        (t + 4, "{ts} [Modelarts Service Log]Training start"),
    )


def build_jobs() -> list[MaJob]:
    """The ModelArts scenarios (see ``cockpit.demo.scenarios.SCENARIOS``) plus healthy jobs."""
    m = 60
    init_stages = lambda c, s: (("scheduling", c, c + 20), ("preparing", c + 20, None))  # noqa: E731
    jobs = [
        # Initializing for 25 min: OBS mount fails with AccessDenied (agency lacks rights)
        MaJob(
            1,
            "detr-coco-obs",
            -25 * m,
            ((-25 * m, "Pending", "Creating"),),
            init_stages(-25 * m, 0),
            events=(
                (-25 * m, "Info", "Job", "Training job created."),
                (
                    -25 * m + 20,
                    "Info",
                    "K8S",
                    _pod(1, "Scheduled", "Successfully assigned to 192.168.0.42"),
                ),
                (
                    -24 * m,
                    "Warning",
                    "K8S",
                    _pod(
                        1,
                        "FailedMount",
                        'MountVolume.SetUp failed for volume "obs-input" : Mount '
                        "/obs/ml-data-prod/coco/ failed: obsfs: AccessDenied: Access Denied (HTTP "
                        "403), the agency modelarts_agency has no obs:object:GetObject / "
                        "obs:bucket:ListBucket on bucket ml-data-prod",
                    ),
                ),
                (
                    -14 * m,
                    "Warning",
                    "K8S",
                    _pod(
                        1,
                        "FailedMount",
                        "Unable to attach or mount volumes: unmounted volumes=[obs-input], "
                        "unattached volumes=[obs-input]: timed out waiting for the condition",
                    ),
                ),
            ),
            inputs=(("data_url", "/ml-data-prod/coco/", "/obs/ml-data-prod/coco/"),),
        ),
        # data path without the /obs/ prefix in the container
        MaJob(
            2,
            "resnet-imagenet-path",
            -50 * m,
            (
                (-50 * m, "Pending", "Creating"),
                (-47 * m, "Running", "Running"),
                (-46 * m, "Failed", "Failed"),
            ),
            (
                ("scheduling", -50 * m, -50 * m + 15),
                ("preparing", -50 * m + 15, -47 * m),
                ("running", -47 * m, -46 * m),
            ),
            events=(
                (-50 * m, "Info", "Job", "Training job created."),
                (-47 * m, "Info", "Job", "Training job is running."),
                (-46 * m, "Error", "Task", "[worker-0] Training end with return code: 1"),
            ),
            log=(
                (-47 * m + 5, "[Modelarts Service Log]Training start"),
                (-47 * m + 9, "Traceback (most recent call last):"),
                (
                    -47 * m + 9,
                    '  File "/home/ma-user/modelarts/user-job-dir/code/train.py", '
                    "line 41, in <module>",
                ),
                (
                    -47 * m + 9,
                    "FileNotFoundError: [Errno 2] No such file or directory: "
                    "'/ml-data/imagenet/train'",
                ),
                (-46 * m, "[Modelarts Service Log]Training end with return code: 1"),
            ),
            params=(("data_url", "/ml-data/imagenet/train"),),
            volumes=(
                {
                    "obs": {
                        "obs_path": "obs://ml-data/imagenet/",
                        "local_path": "/ml-data/imagenet",
                        "read_only": True,
                    }
                },
            ),
            exit_code=1,
            exit_message="exited with code 1",
        ),
        # trailing space in a data path
        MaJob(
            3,
            "yolo-coco-trailing",
            -33 * m,
            (
                (-33 * m, "Pending", "Creating"),
                (-31 * m, "Running", "Running"),
                (-30 * m, "Failed", "Failed"),
            ),
            (
                ("scheduling", -33 * m, -33 * m + 12),
                ("preparing", -33 * m + 12, -31 * m),
                ("running", -31 * m, -30 * m),
            ),
            events=(
                (-33 * m, "Info", "Job", "Training job created."),
                (-30 * m, "Error", "Task", "[worker-0] Training end with return code: 2"),
            ),
            log=(
                (-31 * m + 4, "[Modelarts Service Log]Training start"),
                (-31 * m + 8, "ERROR: dataset path '/obs/ml-data/coco2017/train ' does not exist"),
                (-30 * m, "[Modelarts Service Log]Training end with return code: 2"),
            ),
            inputs=(("data_url", "/ml-data/coco2017/train ", "/obs/ml-data/coco2017/train "),),
            params=(("data_url", "/obs/ml-data/coco2017/train "),),
            exit_code=2,
            exit_message="exited with code 2",
        ),
        # writes a checkpoint into a read-only mount
        MaJob(
            4,
            "bert-ft-ckpt-ro",
            -90 * m,
            (
                (-90 * m, "Pending", "Creating"),
                (-88 * m, "Running", "Running"),
                (-61 * m, "Failed", "Failed"),
            ),
            (
                ("scheduling", -90 * m, -90 * m + 10),
                ("preparing", -90 * m + 10, -88 * m),
                ("running", -88 * m, -61 * m),
            ),
            events=(
                (-90 * m, "Info", "Job", "Training job created."),
                (-88 * m, "Info", "Job", "Training job is running."),
                (-61 * m, "Error", "Task", "[worker-0] Training end with return code: 1"),
            ),
            log=(
                *_progress(-88 * m + 10, 50),
                (-61 * m - 2, "Saving checkpoint to /obs/ml-data/checkpoints/epoch_3.pt"),
                (
                    -61 * m - 1,
                    "OSError: [Errno 30] Read-only file system: "
                    "'/obs/ml-data/checkpoints/epoch_3.pt'",
                ),
                (-61 * m, "[Modelarts Service Log]Training end with return code: 1"),
            ),
            inputs=(("data_url", "/ml-data/glue/", "/obs/ml-data/glue/"),),
            volumes=(
                {
                    "obs": {
                        "obs_path": "obs://ml-data/checkpoints/",
                        "local_path": "/obs/ml-data/checkpoints",
                        "read_only": True,
                    }
                },
            ),
            exit_code=1,
            exit_message="exited with code 1",
        ),
        # image tag typo: 2.1.O instead of 2.1.0
        MaJob(
            5,
            "llama-sft-image",
            -15 * m,
            ((-15 * m, "Pending", "Creating"),),
            init_stages(-15 * m, 0),
            image=f"{SWR}/ml-team/pytorch-train:2.1.O-cuda12.1",
            events=(
                (-15 * m, "Info", "Job", "Training job created."),
                (
                    -15 * m + 20,
                    "Info",
                    "K8S",
                    _pod(5, "Scheduled", "Successfully assigned to 192.168.0.57"),
                ),
                (
                    -14 * m,
                    "Warning",
                    "K8S",
                    _pod(
                        5,
                        "Failed",
                        f'Failed to pull image "{SWR}/ml-team/pytorch-train:2.1.O-cuda12.1": rpc '
                        "error: code = NotFound desc = failed to resolve reference: "
                        f"{SWR}/ml-team/pytorch-train:2.1.O-cuda12.1: not found",
                    ),
                ),
                (-14 * m + 1, "Warning", "K8S", _pod(5, "Failed", "Error: ErrImagePull")),
                (
                    -13 * m,
                    "Warning",
                    "K8S",
                    _pod(
                        5,
                        "BackOff",
                        f'Back-off pulling image "{SWR}/ml-team/pytorch-train:2.1.O-cuda12.1"',
                    ),
                ),
                (-13 * m + 1, "Warning", "K8S", _pod(5, "Failed", "Error: ImagePullBackOff")),
            ),
        ),
        # custom image without bash: the container exits 127
        MaJob(
            6,
            "custom-alpine-train",
            -20 * m,
            (
                (-20 * m, "Pending", "Creating"),
                (-18 * m, "Running", "Running"),
                (-18 * m + 6, "Failed", "Failed"),
            ),
            (
                ("scheduling", -20 * m, -20 * m + 10),
                ("preparing", -20 * m + 10, -18 * m),
                ("running", -18 * m, -18 * m + 6),
            ),
            image=f"{SWR}/ml-team/alpine-py:3.19",
            command="bash -c 'python /code/train.py'",
            events=(
                (-20 * m, "Info", "Job", "Training job created."),
                (-18 * m, "Info", "K8S", _pod(6, "Started", "Started container")),
                (-18 * m + 6, "Error", "Task", "[worker-0] Container exited with code 127"),
            ),
            log=(
                (-18 * m + 1, "[Modelarts Service Log]Training start"),
                (-18 * m + 2, "/bin/sh: bash: not found"),
                (-18 * m + 6, "[Modelarts Service Log]Training end with return code: 127"),
            ),
            exit_code=127,
            exit_message="exited with code 127",
        ),
        # queued 40 min in a public pool with no capacity: waiting, not broken
        MaJob(
            7,
            "sd-xl-4gpu-public",
            -40 * m,
            ((-40 * m, "Pending", "Queuing"),),
            (("scheduling", -40 * m, None),),
            flavor="modelarts.p3.large.public",
            nodes=4,
            events=(
                (-40 * m, "Info", "Job", "Training job created."),
                (
                    -40 * m + 4,
                    "Info",
                    "Job",
                    "The training job is queuing and awaiting resource allocation.",
                ),
            ),
        ),
        # waits in the fragmented dedicated pool (4 GPUs on one node; 7 free across nodes)
        MaJob(
            8,
            "detr-4gpu-dedicated",
            -22 * m,
            ((-22 * m, "Pending", "Queuing"),),
            (("scheduling", -22 * m, None),),
            flavor="modelarts.vm.gpu.4a100",
            pool=POOL_DEDI,
            events=(
                (-22 * m, "Info", "Job", "Training job created."),
                (
                    -22 * m + 3,
                    "Info",
                    "Job",
                    "The training job is queuing and awaiting resource allocation.",
                ),
            ),
        ),
        # evolution: queued three minutes at the start, runs from +5 min
        MaJob(
            9,
            "vit-small-queued",
            -3 * m,
            ((-3 * m, "Pending", "Queuing"), (5 * m, "Running", "Running")),
            (
                ("scheduling", -3 * m, 5 * m - 40),
                ("preparing", 5 * m - 40, 5 * m),
                ("running", 5 * m, None),
            ),
            pool=POOL_TEAM,
            flavor="modelarts.vm.gpu.1v100",
            events=(
                (-3 * m, "Info", "Job", "Training job created."),
                (
                    -3 * m + 2,
                    "Info",
                    "Job",
                    "The training job is queuing and awaiting resource allocation.",
                ),
                (
                    5 * m - 30,
                    "Info",
                    "K8S",
                    _pod(
                        9,
                        "Pulled",
                        f'Successfully pulled image "{SWR}/ml-team/pytorch-train:2.1.0-cuda12.1"',
                    ),
                ),
                (5 * m, "Info", "Job", "Training job is running."),
            ),
            log=_progress(5 * m + 5, 2000, ansi=True),
        ),
        # healthy
        MaJob(
            10,
            "bert-base-zh",
            -3 * 3600,
            ((-3 * 3600, "Pending", "Creating"), (-3 * 3600 + 70, "Running", "Running")),
            (
                ("scheduling", -3 * 3600, -3 * 3600 + 8),
                ("preparing", -3 * 3600 + 8, -3 * 3600 + 70),
                ("running", -3 * 3600 + 70, None),
            ),
            pool=POOL_DEDI,
            flavor="modelarts.vm.gpu.1a100",
            events=(
                (-3 * 3600, "Info", "Job", "Training job created."),
                (-3 * 3600 + 70, "Info", "Job", "Training job is running."),
                (-3 * 3600 + 71, "Info", "Task", "[worker-0] training started."),
            ),
            inputs=(("data_url", "/ml-data/zh-corpus/", "/obs/ml-data/zh-corpus/"),),
            log=_progress(-3 * 3600 + 80, 2000, ansi=True),
        ),
        MaJob(
            11,
            "whisper-ft-done",
            -9 * 3600,
            (
                (-9 * 3600, "Pending", "Creating"),
                (-9 * 3600 + 60, "Running", "Running"),
                (-5 * 3600, "Completed", "Completed"),
            ),
            (
                ("scheduling", -9 * 3600, -9 * 3600 + 5),
                ("preparing", -9 * 3600 + 5, -9 * 3600 + 60),
                ("running", -9 * 3600 + 60, -5 * 3600),
                ("end", -5 * 3600, -5 * 3600),
            ),
            events=(
                (-9 * 3600, "Info", "Job", "Training job created."),
                (-5 * 3600, "Info", "Job", "Training job completed."),
            ),
            log=(
                *_progress(-9 * 3600 + 70, 40, every=300),
                (-5 * 3600, "[Modelarts Service Log]Training end with return code: 0"),
            ),
            exit_code=0,
        ),
        MaJob(
            12,
            "ppo-robot-arm",
            -26 * 3600,
            (
                (-26 * 3600, "Pending", "Creating"),
                (-26 * 3600 + 45, "Running", "Running"),
                (-20 * 3600, "Completed", "Completed"),
            ),
            (
                ("scheduling", -26 * 3600, -26 * 3600 + 5),
                ("preparing", -26 * 3600 + 5, -26 * 3600 + 45),
                ("running", -26 * 3600 + 45, -20 * 3600),
                ("end", -20 * 3600, -20 * 3600),
            ),
            pool=POOL_TEAM,
            flavor="modelarts.vm.gpu.8v100",
            exit_code=0,
            log=((-20 * 3600, "[Modelarts Service Log]Training end with return code: 0"),),
        ),
        # init-log baseline pair, same pool and image: a good start (Running) and one
        # stuck in pip install
        MaJob(
            13,
            "gpt2-zh-pretrain",
            -2 * 3600,
            ((-2 * 3600, "Pending", "Creating"), (-2 * 3600 + 90, "Running", "Running")),
            (
                ("scheduling", -2 * 3600, -2 * 3600 + 6),
                ("preparing", -2 * 3600 + 6, -2 * 3600 + 90),
                ("running", -2 * 3600 + 90, None),
            ),
            pool=POOL_TEAM,
            flavor="modelarts.vm.gpu.1v100",
            events=(
                (-2 * 3600, "Info", "Job", "Training job created."),
                (-2 * 3600 + 90, "Info", "Job", "Training job is running."),
            ),
            inputs=(
                ("data_url", "/ml-data/zh-corpus/", "/home/ma-user/modelarts/inputs/data_url_0"),
            ),
            log=(*_startup(-2 * 3600 + 8, 38), *_progress(-2 * 3600 + 100, 2000, every=60)),
        ),
        MaJob(
            14,
            "gpt2-zh-pretrain-v2",
            -16 * m,
            ((-16 * m, "Pending", "Creating"),),
            init_stages(-16 * m, 0),
            pool=POOL_TEAM,
            flavor="modelarts.vm.gpu.1v100",
            events=(
                (-16 * m, "Info", "Job", "Training job created."),
                (-16 * m + 20, "Info", "K8S", _pod(14, "Started", "Started container")),
            ),
            inputs=(
                ("data_url", "/ml-data/zh-corpus/", "/home/ma-user/modelarts/inputs/data_url_0"),
            ),
            log=_startup(-16 * m + 22, 0, stuck=True),
        ),
        # the console says "start pulling image" for 12 min, but no event shows the pod
        # scheduled or a pull begun, and nothing says it is queued: never placed on a node
        MaJob(
            15,
            "qwen-7b-sft-a100",
            -12 * m,
            ((-12 * m, "Pending", "Creating"),),
            init_stages(-12 * m, 0),
            pool=POOL_DEDI,
            flavor="modelarts.vm.gpu.1a100",
            events=((-12 * m, "Info", "Job", "Training job created."),),
            inputs=(("data_url", "/ml-data/sft/", "/obs/ml-data/sft/"),),
            extra={"sub_stages": {"preparing": ("start pulling image",)}},
        ),
        # Running, but its log stopped 47 min ago mid-epoch: a hung collective keeps 16 GPUs
        MaJob(
            16,
            "llama-13b-ddp-2node",
            -3 * 3600,
            ((-3 * 3600, "Pending", "Creating"), (-3 * 3600 + 60, "Running", "Running")),
            (
                ("scheduling", -3 * 3600, -3 * 3600 + 6),
                ("preparing", -3 * 3600 + 6, -3 * 3600 + 60),
                ("running", -3 * 3600 + 60, None),
            ),
            pool=POOL_TEAM,
            flavor="modelarts.vm.gpu.8v100",
            nodes=2,
            events=(
                (-3 * 3600, "Info", "Job", "Training job created."),
                (-3 * 3600 + 60, "Info", "Job", "Training job is running."),
            ),
            log=(
                (-3 * 3600 + 65, "{ts} [ModelArts Service Log]Training start, 2 nodes x 8 GPUs"),
                *((at, "{ts} " + line) for at, line in _progress(-3 * 3600 + 120, 132, every=60)),
            ),
        ),
    ]
    return jobs


@dataclass(frozen=True)
class MaNode:
    name: str
    phase: str
    cpu: int
    mem_gi: int
    gpus: int
    free_cpu: int
    free_mem_gi: int
    free_gpus: int
    ip: str


def build_pools() -> dict[str, tuple[str, str, list[MaNode]]]:
    """pool id -> (console name, node flavor, nodes)."""
    dedi = [
        MaNode("node-a100-0", "Available", 128, 1024, 8, 24, 190, 2, "192.168.10.11"),
        MaNode("node-a100-1", "Available", 128, 1024, 8, 30, 220, 2, "192.168.10.12"),
        MaNode("node-a100-2", "Available", 128, 1024, 8, 22, 180, 2, "192.168.10.13"),
        MaNode("node-a100-3", "Available", 128, 1024, 8, 12, 96, 1, "192.168.10.14"),
        MaNode("node-a100-4", "Abnormal", 128, 1024, 8, 0, 0, 0, "192.168.10.15"),
    ]
    team = [
        MaNode("node-v100-0", "Available", 64, 512, 8, 64, 500, 8, "192.168.20.11"),
        MaNode("node-v100-1", "Available", 64, 512, 8, 56, 440, 7, "192.168.20.12"),
    ]
    return {
        POOL_DEDI: ("a100-dedicated", "modelarts.vm.gpu.8a100", dedi),
        POOL_TEAM: ("v100-team", "modelarts.vm.gpu.8v100", team),
    }
