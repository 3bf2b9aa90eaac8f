"""Curated catalogues with their origin: PyTorch distributed (c10d, torchrun) and the Linux kernel.

    python3 tools/catalogue/curated.py

Their messages are few and stable, and the sources are too large to mirror for a handful of
strings: each entry names the upstream file that prints it (PyTorch 2.1-2.7, Linux 3.10-6.x;
``versions`` says which). Writes cockpit/diagnosis/catalogue/{torch,kernel}.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import entry, write  # noqa: E402
from mapping import GENERIC, REMEDY  # noqa: E402

G = GENERIC
C10D = "torch/csrc/distributed/c10d/"
ELASTIC = "torch/distributed/elastic/"
TORCH_V = ["2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7"]
_PORT = (
    "Another process (often the previous run, or a second job on the node) holds the "
    "rendezvous port: pick a free MASTER_PORT / --master_port (e.g. from the job id)."
)
_RDZV = (
    "Not every rank reached the rendezvous in time: check that all nodes started (sacct -j "
    "<id> per step), MASTER_ADDR resolves from every node, and the port is open."
)

# (template, origin file, domain, label, remedy)
TORCH: list[tuple[str, str, str, str, str]] = [
    (
        "Watchdog caught collective operation timeout: %s ran for %d milliseconds before timing "
        "out.",
        C10D + "ProcessGroupNCCL.cpp",
        "network",
        "nccl_communication_error",
        "",
    ),
    (
        "Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA "
        "kernels, subsequent GPU operations might run on corrupted/incomplete data.",
        C10D + "ProcessGroupNCCL.cpp",
        "network",
        "nccl_communication_error",
        "",
    ),
    (
        "To avoid data inconsistency, we are taking the entire process down.",
        C10D + "ProcessGroupNCCL.cpp",
        "network",
        "nccl_communication_error",
        "",
    ),
    (
        "ProcessGroupNCCL's watchdog got stuck for %d seconds without making progress in "
        "monitoring enqueued collectives.",
        C10D + "ProcessGroupNCCL.cpp",
        "network",
        "nccl_communication_error",
        "",
    ),
    (
        "Heartbeat monitor timed out! Process will be terminated after dumping debug info.",
        C10D + "ProcessGroupNCCL.cpp",
        "network",
        "nccl_communication_error",
        "",
    ),
    (
        "NCCL communicator was aborted on rank %d.",
        C10D + "ProcessGroupNCCL.cpp",
        "network",
        "nccl_communication_error",
        "",
    ),
    (
        "NCCL error in: %s:%d, unhandled system error (run with NCCL_DEBUG=INFO for details), "
        "NCCL version %s",
        C10D + "NCCLUtils.hpp",
        "network",
        "nccl_communication_error",
        "",
    ),
    (
        "ncclRemoteError: A call failed possibly due to a network error or a remote process "
        "exiting prematurely.",
        C10D + "NCCLUtils.hpp",
        "network",
        "nccl_communication_error",
        "",
    ),
    (
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or "
        "device error.",
        C10D + "NCCLUtils.hpp",
        "network",
        "nccl_communication_error",
        "",
    ),
    (
        "The server socket has failed to listen on any local network address.",
        C10D + "socket.cpp",
        "network",
        G,
        _PORT,
    ),
    (
        "The server socket has failed to bind to %s (errno: %d - %s).",
        C10D + "socket.cpp",
        "network",
        G,
        _PORT,
    ),
    (
        "The client socket has failed to connect to any network address of (%s, %d).",
        C10D + "socket.cpp",
        "network",
        "mpi_network_error",
        "",
    ),
    (
        "The client socket has timed out after %dms while trying to connect to (%s, %d).",
        C10D + "socket.cpp",
        "network",
        "mpi_network_error",
        "",
    ),
    (
        "Timed out after %d seconds waiting for clients. %d/%d clients joined.",
        C10D + "TCPStore.cpp",
        "network",
        G,
        _RDZV,
    ),
    (
        "Timed out waiting %dms for recv operation to complete",
        "third_party/gloo/gloo/transport/tcp/unbound_buffer.cc",
        "network",
        G,
        _RDZV,
    ),
    (
        "Connection closed by peer [%s]:%d",
        "third_party/gloo/gloo/transport/tcp/pair.cc",
        "network",
        "mpi_network_error",
        "",
    ),
    ("RendezvousTimeoutError", ELASTIC + "rendezvous/api.py", "network", G, _RDZV),
    ("RendezvousClosedError", ELASTIC + "rendezvous/api.py", "network", G, _RDZV),
    (
        "The connection to the C10d store has failed.",
        ELASTIC + "rendezvous/c10d_rendezvous_backend.py",
        "network",
        "mpi_network_error",
        "",
    ),
    (
        "failed (exitcode: %d) local_rank: %d (pid: %d) of binary: %s",
        ELASTIC + "multiprocessing/api.py",
        "application",
        G,
        REMEDY["application"],
    ),
    (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError",
        ELASTIC + "multiprocessing/errors/__init__.py",
        "application",
        G,
        "The launcher's summary: the failing rank's own error is in the lines above it.",
    ),
    (
        "Process %d got signal: %d",
        ELASTIC + "multiprocessing/api.py",
        "application",
        G,
        "A signal from outside (Slurm's time limit or scancel, the OOM killer): sacct -j <id> "
        "shows the job's state and reason.",
    ),
    (
        "Detected mismatch between collectives on ranks.",
        C10D + "ProcessGroupWrapper.cpp",
        "application",
        G,
        "Ranks called different collectives: a code path differs per rank.",
    ),
    (
        "Default process group has not been initialized, please make sure to call "
        "init_process_group.",
        "torch/distributed/distributed_c10d.py",
        "application",
        G,
        REMEDY["application"],
    ),
    (
        "CUDA error: an illegal memory access was encountered",
        "c10/cuda/CUDAException.cpp",
        "accelerator",
        G,
        REMEDY["accelerator"],
    ),
    (
        "CUDA error: device-side assert triggered",
        "c10/cuda/CUDAException.cpp",
        "accelerator",
        G,
        "A kernel assertion (often an index out of range): rerun with CUDA_LAUNCH_BLOCKING=1.",
    ),
    (
        "CUDA out of memory. Tried to allocate %s",
        "c10/cuda/CUDACachingAllocator.cpp",
        "accelerator",
        "gpu_out_of_memory",
        "",
    ),
    (
        "CUDA error: no kernel image is available for execution on the device",
        "c10/cuda/CUDAException.cpp",
        "accelerator",
        "cuda_driver_mismatch",
        "",
    ),
]

K = ["3.10", "4.18", "5.14", "5.15", "6.1", "6.8"]
_HUNG = (
    "A task stuck in uninterruptible sleep, usually on I/O: check the file systems it uses "
    "(NFS/Lustre/GPFS client logs) and the node's disks; drain the node if it recurs."
)
_NODE = "The node itself failed: drain it (scontrol update nodename=<n> state=drain) and check it."
KERNEL: list[tuple[str, str, str, str, str]] = [
    (
        "Out of memory: Killed process %d (%s) total-vm:%lukB, anon-rss:%lukB, file-rss:%lukB, "
        "shmem-rss:%lukB",
        "mm/oom_kill.c",
        "memory",
        "oom_killed",
        "",
    ),
    (
        "Out of memory: Kill process %d (%s) score %u or sacrifice child",
        "mm/oom_kill.c",
        "memory",
        "oom_killed",
        "",
    ),
    (
        "Memory cgroup out of memory: Killed process %d (%s)",
        "mm/oom_kill.c",
        "memory",
        "oom_killed",
        "",
    ),
    (
        "%s invoked oom-killer: gfp_mask=%#x(%s), order=%d, oom_score_adj=%d",
        "mm/oom_kill.c",
        "memory",
        "oom_killed",
        "",
    ),
    ("oom-kill:constraint=%s,nodemask=%s", "mm/oom_kill.c", "memory", "oom_killed", ""),
    (
        "oom_reaper: reaped process %d (%s), now anon-rss:%lukB, file-rss:%lukB, shmem-rss:%lukB",
        "mm/oom_kill.c",
        "memory",
        "oom_killed",
        "",
    ),
    ("Out of memory and no killable processes...", "mm/oom_kill.c", "memory", G, REMEDY["memory"]),
    ("INFO: task %s:%d blocked for more than %ld seconds.", "kernel/hung_task.c", "node", G, _HUNG),
    ("Kernel panic - not syncing: %s", "kernel/panic.c", "node", G, _NODE),
    (
        "watchdog: BUG: soft lockup - CPU#%d stuck for %us! [%s:%d]",
        "kernel/watchdog.c",
        "node",
        G,
        _NODE,
    ),
    ("Watchdog detected hard LOCKUP on cpu %d", "kernel/watchdog_perf.c", "node", G, _NODE),
    (
        "rcu: INFO: rcu_sched self-detected stall on CPU",
        "kernel/rcu/tree_stall.h",
        "node",
        G,
        _NODE,
    ),
    ("EDAC MC%d: %d UE %s on %s", "drivers/edac/edac_mc.c", "node", "host_memory_error", ""),
    ("EDAC MC%d: %d CE %s on %s", "drivers/edac/edac_mc.c", "node", "host_memory_error", ""),
    (
        "mce: [Hardware Error]: Machine check events logged",
        "arch/x86/kernel/cpu/mce/core.c",
        "node",
        "host_memory_error",
        "",
    ),
    (
        "Memory failure: %#lx: recovery action for %s: %s",
        "mm/memory-failure.c",
        "node",
        "host_memory_error",
        "",
    ),
    (
        "nfs: server %s not responding, still trying",
        "fs/nfs/clnt.c (net/sunrpc/clnt.c)",
        "storage",
        "shared_fs_unreachable",
        "",
    ),
    (
        "nfs: server %s not responding, timed out",
        "net/sunrpc/clnt.c",
        "storage",
        "shared_fs_unreachable",
        "",
    ),
    (
        "Lustre: %s: Connection to %s (at %s) was lost; in progress operations using this service "
        "will wait for recovery to complete",
        "lustre/ptlrpc/import.c (Lustre client)",
        "storage",
        "shared_fs_unreachable",
        "",
    ),
    (
        "LustreError: %s: operation %s to node %s failed: rc = %d",
        "lustre/ptlrpc/client.c (Lustre client)",
        "storage",
        G,
        REMEDY["storage"],
    ),
    ("EXT4-fs error (device %s): %s", "fs/ext4/super.c", "storage", G, REMEDY["storage"]),
    ("Remounting filesystem read-only", "fs/ext4/super.c", "storage", "storage_read_only", ""),
    ("I/O error, dev %s, sector %llu", "block/blk-core.c", "storage", G, REMEDY["storage"]),
    (
        "Buffer I/O error on dev %s, logical block %llu",
        "fs/buffer.c",
        "storage",
        G,
        REMEDY["storage"],
    ),
    (
        "NETDEV WATCHDOG: %s (%s): transmit queue %u timed out",
        "net/sched/sch_generic.c",
        "network",
        G,
        REMEDY["network"],
    ),
    (
        "segfault at %lx ip %lx sp %lx error %lx",
        "arch/x86/mm/fault.c",
        "application",
        G,
        REMEDY["application"],
    ),
]


def build(rows, program: str, versions: list[str], upstream: str) -> list[dict]:
    out = []
    for template, origin, domain, label, remedy in rows:
        e = entry(template, "error", f"{upstream}: {origin}", versions, domain, label, remedy)
        out.append(e | {"program": program})
    return out


def main() -> int:
    torch = build(TORCH, "torch", TORCH_V, "pytorch/pytorch")
    kernel = build(KERNEL, "kernel", K, "torvalds/linux")
    meta = {"generator": "tools/catalogue/curated.py", "curated": True}
    print(
        write(
            "torch",
            {
                "source": "torch",
                "upstream": "https://github.com/pytorch/pytorch",
                "versions": dict.fromkeys(TORCH_V, "release"),
                **meta,
            },
            torch,
        )
    )
    print(
        write(
            "kernel",
            {
                "source": "kernel",
                "upstream": "https://github.com/torvalds/linux",
                "versions": dict.fromkeys(K, "release"),
                **meta,
            },
            kernel,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
