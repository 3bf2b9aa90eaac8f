"""The fabric between a job's ranks as its launchers and transports report it: torchrun's c10d
store, Gloo's TCP pairs, PMI, MPICH/Intel MPI's Hydra bootstrap, Open MPI's daemons, UCX and
the RDMA verbs' completion statuses, and ssh when a launcher reaches a node through it. In
precedence order, spliced into :data:`cockpit.diagnosis.patterns.PATTERNS` where the GPU hosts'
patterns end (moved out of patterns.py, which passed 800 lines)."""

from __future__ import annotations

from cockpit.diagnosis.pattern_base import Pattern
from cockpit.diagnosis.pattern_base import spec as _p

FABRIC: tuple[Pattern, ...] = (
    # the c10d store / rendezvous of torchrun and init_process_group: a rank cannot reach the
    # master's address and port (firewall, container networking, wrong MASTER_ADDR), whatever
    # the release prints the timeout in (ms or s) or the sentence the error is quoted in
    _p(
        "c10d_store_connect",
        r"DistNetworkError|The client socket has (?:timed out|failed to connect)|"
        r"RendezvousConnectionError|connection to the C10d store has failed|"
        # a rank's request to the store gives up (the rank serving it still busy, e.g.
        # tokenizing, or gone): NCCL's unique id never arrives
        r"store->get\([^)\n]*\) got error|DistStoreError|"
        # the store's port is taken (another run on the node uses MASTER_PORT)
        r"The server socket has failed to (?:bind|listen)|"
        r"RuntimeError: Address already in use|EADDRINUSE",
        "mpi_network_error",
        tier=2,
    ),
    # Gloo's TCP transport (Horovod, torch.distributed's gloo backend): the interface named for
    # it does not exist on this host, or a peer's pair never connected
    _p(
        "gloo_transport",
        r"Unable to find address for: \S+|Gloo connectFullMesh failed|"
        r"gloo/transport/tcp/[^\n]*(?:Connection refused|Connection reset|[Tt]imed out|"
        r"Connect timeout|No route to host)",
        "mpi_network_error",
        tier=2,
    ),
    _p(
        "mpi_pmi",
        r"PMI2_Init failed|PMIx?_Init failed|OMPI was not built with SLURM's PMI support|"
        r"An ORTE daemon has unexpectedly failed|PMI_Init returned",
        "mpi_pmi_mismatch",
        tier=2,
    ),
    # MPICH/Intel MPI's Hydra could not start its proxy on a host: the bootstrap (ssh by
    # default, absent in a container; a host unreachable; the proxy binary missing) failed
    _p(
        "hydra_bootstrap",
        r"[Uu]nable to run (?:bstrap_)?proxy on \S+|"
        r"[Ee]rror setting up the boo?tstrap proxies|"
        r"HYDU_create_process \([^)\n]*\): execvp error on file",
        "mpi_launch_failed",
        tier=2,
    ),
    # ssh refusing a launcher's login to a node (pdsh, mpirun's rsh agent, DeepSpeed): the
    # node's host key is not known here, or no key is accepted; the launcher's summary after it
    # ("ssh exited with exit code 255") says only that ssh failed
    _p(
        "ssh_refused",
        r"Host key verification failed|Permission denied \(publickey",
        "mpi_launch_failed",
        tier=2,
    ),
    _p(
        "mpi_network",
        r"error: connect\b|Connection refused|Connection reset by peer|No route to host|"
        r"MPI_Init.*(?:timed out|failed)|unable to complete a TCP connection|"
        # UCX over InfiniBand/RoCE: the adapter gave up resending to a peer that did not answer
        r"Transport retry count exceeded|\bUCX +(?:ERROR|FATAL|Fatal)\b|"
        # the fabric's own words in any producer: ibv_wc_status_str's completion statuses (a
        # peer that never acked), UCX's transport giving up on an endpoint ("ud_iface.c:737
        # Fatal: transport error: Endpoint timeout", with or without its "UCX" prefix)
        r"[Tt]ransport retry counter exceeded|RNR retry counter exceeded|"
        r"IBV_WC_(?:RNR_)?RETRY_EXC_ERR|Fatal: transport error: |"
        r"Fatal: UD endpoint \S+ unhandled timeout|Endpoint timeout was not handled|"
        # ssh's own refusal while a launcher (mpirun's rsh agent, pdsh, DeepSpeed's hostfile
        # check) reaches a node: the name does not resolve, or the host does not answer
        r"\bssh: Could not resolve hostname \S+|\bssh: connect to host \S+ port \d+: ",
        "mpi_network_error",
        tier=2,
    ),
)
