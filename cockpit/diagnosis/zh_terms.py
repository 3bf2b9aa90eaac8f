"""Chinese terms of ModelArts consoles, CANN tools and Chinese-locale logs, as data.

ModelArts events and logs come in Chinese when the console language is zh-cn, and hosts with
a Chinese locale write GBK. Each term is matched as UTF-8 *and* GBK bytes (the scanner never
decodes a whole log), as an alternation: RE2 reads byte patterns one byte at a time, so a
character class of Chinese characters would mean something else.

Specific terms come before general ones (显存不足 before 内存不足 before 资源不足), as in the
pattern catalogue, and each row names the label of ``docs/root-causes.md`` it gives.
"""

from __future__ import annotations

import re

from cockpit.model import Severity


def zh(*terms: str) -> bytes:
    """A group matching any of ``terms`` encoded as UTF-8 or as GBK."""
    alts = [re.escape(t.encode(enc)) for t in terms for enc in ("utf-8", "gbk")]
    return b"(?:" + b"|".join(alts) + b")"


_DENIED = zh("权限不足", "没有权限", "无权限", "拒绝访问", "访问被拒绝")
_OBS = b"(?:OBS|obs|" + zh("桶") + b")"

QUEUING = zh("排队中", "等待资源分配", "等待资源")
INIT_TIMEOUT = zh("准备超时", "准备阶段超时", "初始化超时")

# (name, regex bytes, label, severity, tier); strong: each names a cause
STRONG: tuple[tuple[str, bytes, str, Severity, int], ...] = (
    (
        "zh_npu_oom",
        zh("显存不足", "显存资源不足", "NPU内存不足", "设备内存不足"),
        "gpu_out_of_memory",
        "critical",
        2,
    ),
    ("zh_oom", zh("内存不足", "内存资源不足", "内存溢出"), "oom_killed", "critical", 2),
    ("zh_disk_full", zh("磁盘空间不足", "磁盘已满", "空间不足"), "disk_full", "critical", 2),
    (
        "zh_quota",
        zh("配额不足", "超出配额", "超过配额", "配额已满"),
        "queued_quota_limit",
        "warning",
        0,
    ),
    (
        "zh_image_pull",
        zh("镜像拉取失败", "拉取镜像失败", "镜像下载失败", "镜像不存在"),
        "image_pull_failed",
        "critical",
        1,
    ),
    ("zh_mount", zh("挂载失败"), "storage_mount_failed", "critical", 1),
    # bash in a Chinese locale: "x: 未找到命令" is "x: command not found"
    ("zh_command_not_found", zh("未找到命令"), "command_not_found", "critical", 2),
    (
        "zh_access_denied",
        _OBS + rb"[^\n]*" + _DENIED + b"|" + _DENIED + rb"[^\n]*" + _OBS,
        "storage_access_denied",
        "critical",
        2,
    ),
    (
        "zh_not_found",
        zh("路径不存在", "文件不存在", "对象不存在", "目录不存在", "数据不存在"),
        "input_path_not_found",
        "critical",
        2,
    ),
    ("zh_obs_timeout", _OBS + rb"[^\n]*" + zh("超时"), "storage_connection_error", "critical", 2),
    (
        "zh_comm_timeout",
        zh("通信超时", "建链超时") + rb"|(?:HCCL|hccl)[^\n]*" + zh("超时"),
        "nccl_communication_error",
        "critical",
        2,
    ),
    # glibc's zh_CN strerror (what bash, coreutils and Python print in a Chinese locale):
    # ENOSPC, EDQUOT and EROFS name their cause as the English wordings do
    ("zh_errno_enospc", zh("设备上没有空间"), "disk_full", "critical", 2),
    ("zh_errno_edquot", zh("超出磁盘限额"), "disk_quota_exceeded", "critical", 2),
    ("zh_errno_erofs", zh("只读文件系统"), "storage_read_only", "critical", 2),
    (
        "zh_insufficient",
        zh("资源不足", "资源不够"),
        "queued_insufficient_resources",
        "warning",
        0,
    ),
)
# bash's signal descriptions in a Chinese locale (glibc's zh_CN strsignal): a crash of the
# program ("Segmentation fault (core dumped)", "Bus error", "Aborted", "Floating point
# exception") and the bare "Killed" of the kernel's OOM killer
CRASH = zh("段错误", "核心已转储", "总线错误", "已放弃", "浮点数例外")
KILLED = zh("已杀死")
# glibc's zh_CN strerror of a refused or missing resource (EACCES, EPERM, ENOENT, ECONNREFUSED,
# EHOSTUNREACH, ENETUNREACH, ENOMEM) and coreutils' "cannot …": like "Permission denied", a
# failure said without an error word (batch 30: bash's "<path>: 权限不够" was silent)
ERRNO_WORDS = zh(
    "权限不够",
    "不允许的操作",
    "没有那个文件或目录",
    "拒绝连接",
    "没有到主机的路由",
    "网络不可达",
    "无法分配内存",
    "无法创建目录",
    "无法打开",
    "无法访问",
)
# The words a failure is announced with: symptoms, used only when nothing names the cause.
FAILED = zh("作业运行失败", "训练作业失败", "运行失败", "失败", "错误", "异常")
