"""Kinds that had no label (issue #30's notes: HDF5 file locking on NFS/Lustre, the open-files
limit, an uninitialised conda shell): a second wording of each, from other public sources than
the bundles (cases 349-360 hold the first), must get the kind's label and its own line as the
headline."""

from __future__ import annotations

import pytest

from cockpit.ingest.bundle import diagnose_bundle
from tests.bundle_support import diagnose_text as _diagnose


@pytest.mark.parametrize(
    "name,text,label,headline",
    [
        # --- storage_file_lock_failed
        # ESMValTool#3463: netCDF4 under HDF5 1.12, the stack's innermost frame says why (errno
        # 11: another process holds the file); the outer frames only announce it
        (
            "recipe.err",
            "  #005: H5Fint.c line 1873 in H5F_open(): unable to lock the file\n"
            "    major: File accessibility\n"
            "    minor: Unable to lock file\n"
            "  #006: H5FD.c line 2034 in H5FD_lock(): driver lock request failed\n"
            "    major: Virtual File Layer\n"
            "    minor: Unable to lock file\n"
            "  #007: H5FDsec2.c line 988 in H5FD__sec2_lock(): unable to lock file, errno = 11, "
            "error message = 'Resource temporarily unavailable'\n",
            "storage_file_lock_failed",
            "  #007: H5FDsec2.c line 988 in H5FD__sec2_lock(): unable to lock file, errno = 11, "
            "error message = 'Resource temporarily unavailable'",
        ),
        # inStrain#183: h5py 3's wording ("synchronously"), Python's errno prefix
        (
            "nohup.out",
            "OSError: [Errno 37] Unable to synchronously create file (unable to lock file, "
            "errno = 37, error message = 'No locks available')\n",
            "storage_file_lock_failed",
            "OSError: [Errno 37] Unable to synchronously create file (unable to lock file, "
            "errno = 37, error message = 'No locks available')",
        ),
        # spack#12501: not HDF5 at all, spack's own lock on an NFS home (the maintainer's answer)
        (
            "spack-load.txt",
            "$ spack load hdf5\nError: [Errno 37] No locks available\n",
            "storage_file_lock_failed",
            "Error: [Errno 37] No locks available",
        ),
        # --- open_files_limit
        # ShapeWorks#1556: PyTorch's own sentence when its worker queue runs out of descriptors
        (
            "deepssm.log",
            "RuntimeError: Too many open files. Communication with the workers is no longer "
            "possible. Please increase the limit using `ulimit -n` in the shell or change the "
            "sharing strategy by calling "
            "`torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of "
            "your code\n",
            "open_files_limit",
            "RuntimeError: Too many open files. Communication with the workers is no longer "
            "possible. Please increase the limit using `ulimit -n` in the shell or change the "
            "sharing strategy by calling "
            "`torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of "
            "your code",
        ),
        # mmpose#2595 (a Chinese report): the shared-memory line carries the errno itself
        (
            "train.log",
            "RuntimeError:unable to open share memory object</torch_74354_3738061832_2008> in "
            "read-write mode:Too many open files(24)。\n",
            "open_files_limit",
            "RuntimeError:unable to open share memory object</torch_74354_3738061832_2008> in "
            "read-write mode:Too many open files(24)。",
        ),
        # a-ludi/dentist#31: a D program's message with no error word at all
        (
            "collect.log",
            "Could not create pipe to check startup of child (Too many open files)\n",
            "open_files_limit",
            "Could not create pipe to check startup of child (Too many open files)",
        ),
        # QwenLM/Qwen2.5-Omni#88: asyncio's ERROR line first, the errno line says why
        (
            "webui.log",
            "ERROR:asyncio:socket.accept() out of system resource\n"
            "Traceback (most recent call last):\n"
            '  File "/root/miniconda3/envs/llm_310/lib/python3.10/socket.py", line 293, in '
            "accept\n"
            "OSError: [Errno 24] Too many open files\n",
            "open_files_limit",
            "OSError: [Errno 24] Too many open files",
        ),
        # --- conda_shell_not_initialised
        # mamba PR #1360: micromamba's first wording ("the parent one")
        (
            "setup.log",
            "'micromamba' is running as a subprocess and can't modify the parent one.\n"
            "In order to use activate and deactivate you need to initialize your shell.\n",
            "conda_shell_not_initialised",
            "'micromamba' is running as a subprocess and can't modify the parent one.",
        ),
        # an OLCF Summit helper's note: conda comes from a module not loaded in this shell
        (
            "summit.txt",
            "$ conda env list\n-bash: conda: command not found\n",
            "conda_shell_not_initialised",
            "-bash: conda: command not found",
        ),
        # conda#7620: conda 4.4's longer wording of the same refusal
        (
            "job.err",
            "CommandNotFoundError: Your shell has not been properly configured to use 'conda "
            "activate'.\n"
            "If your shell is Bash or a Bourne variant, enable conda for the current user with\n",
            "conda_shell_not_initialised",
            "CommandNotFoundError: Your shell has not been properly configured to use 'conda "
            "activate'.",
        ),
    ],
)
def test_second_wording(tmp_path, name, text, label, headline):
    report = _diagnose(tmp_path, name, text)
    assert report["findings"][0]["root_cause"] == label
    assert report["first_error"]["text"] == headline


def test_a_full_dev_shm_stays_shared_memory(tmp_path):
    # PyTorch's shared-memory line with no descriptor error after it is still /dev/shm
    report = _diagnose(
        tmp_path,
        "train.log",
        "RuntimeError: unable to open shared memory object </torch_29919_1396182366> in "
        "read-write mode\n",
    )
    assert report["findings"][0]["root_cause"] == "shared_memory_exhausted"


@pytest.mark.parametrize(
    "line,label",
    [
        # glibc's zh_CN texts for ENOLCK and EMFILE (libc.mo), as a Chinese-locale host prints
        ("flock: /data/run.lock: 没有可用的锁", "storage_file_lock_failed"),
        ("OSError: [Errno 24] 打开的文件过多: '/data/x.h5'", "open_files_limit"),
        # bash in a Chinese locale
        (
            "/var/spool/slurmd/job42/slurm_script: 行 7: conda: 未找到命令",
            "conda_shell_not_initialised",
        ),
    ],
)
def test_chinese_locale_words(tmp_path, line, label):
    for enc in ("utf-8", "gbk"):
        (tmp_path / "slurm-42.out").write_bytes((line + "\n").encode(enc))
        report = diagnose_bundle(str(tmp_path)).to_json()
        assert report["findings"][0]["root_cause"] == label, enc


@pytest.mark.parametrize(
    "line,label",
    [
        # lines no pattern holds, whose own words name the kind (kind_words)
        (
            "warning: fcntl lockf on /nfs/db.lock: Function not implemented",
            "storage_file_lock_failed",
        ),
        ("ERROR: worker could not start: out of file descriptors", "open_files_limit"),
        ("ERROR: unable to lock the file /scratch/out.nc", "storage_file_lock_failed"),
    ],
)
def test_kind_words_name_them(line, label):
    from cockpit.diagnosis.kind_words import kind_of_line

    got = kind_of_line(line)
    assert got is not None and got[0] == label
