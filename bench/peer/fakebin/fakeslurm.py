#!/usr/bin/python3
"""Fake Slurm 22.05 client commands over a big synthetic queue, for peer benchmarks.

squeue, sinfo, scontrol, sacct and sstat in this folder are symlinks to this file; argv[0] picks
the command. Environment:
  FAKE_SLURM_JOBS  jobs in the queue, one row each under `squeue --array` (default 100000)
  FAKE_SLURM_SEED  generator seed (default 1): same seed and N give the same jobs
  FAKE_SLURM_NOW   epoch seconds taken as "now" (default: the wall clock, so running jobs'
                   TIME ticks between calls as on a real cluster)
  FAKE_SLURM_LOG   call log: each call appends "<epoch>\t<command>\t<args>" (default
                   /tmp/fake-slurm-calls.log)
  FAKE_SLURM_EPOCH epoch seconds jobs were submitted before (default: "now", as the shared
                   harness does, so every job's submit time slides with the clock and every
                   row changes between calls; a fixed value keeps submit times still, as on a
                   real cluster, where only running jobs' TIME changes between polls)
  FAKE_SLURM_CHURN share of the queue that leaves per minute since FAKE_SLURM_EPOCH (e.g. 0.01),
                   as many jobs arriving with rising ids: a real site's flow (default 0)
  (this copy also honours `sacct --state`, as sacct does: the shared harness's fake ignores it
  and answers a state-filtered sacct with every job of the queue)
  FAKE_SLURM_VERSION the release the commands claim (default 22.05.8): from 23.11 squeue
                   takes --only-job-state (ids and states), before it refuses it as 22.05 does
  FAKE_SLURM_CACHE a folder: with FAKE_SLURM_NOW set, each distinct call's output is kept
                   there and replayed, so a benchmark measures the reader, not this fake
The shebang is /usr/bin/python3 on purpose: a pyenv shim would add ~0.1 s to every call.
"""
import argparse, bisect, functools, getpass, itertools, json, os, random, re, shlex, sys, time
from datetime import datetime

HERE = os.path.dirname(os.path.realpath(__file__))
CLUSTER = "fake"
# name, node prefix, nodes, cpus/node, mem/node MB, max time (s), share of jobs
PARTITIONS = [
    ("cpu", "c", 512, 64, 256000, 2 * 86400, 45), ("gpu", "g", 64, 32, 512000, 86400, 25),
    ("long", "c", 512, 64, 256000, 7 * 86400, 10), ("preempt", "c", 512, 64, 256000, 4 * 3600, 10),
    ("bigmem", "m", 16, 128, 2048000, 3 * 86400, 6), ("debug", "d", 8, 32, 128000, 1800, 4)]
USERS = ("alice bob carol dave erin frank grace heidi ivan judy ken lena mallory nina oscar "
         "peggy quinn rupert sybil trent ursula victor wendy xavier yuki zoe amir bea chen dara "
         "emil fatima goran hana ines jonas kira lars mei nils").split()
ACCOUNTS = ["physics", "chem", "bio", "ml", "climate", "astro"]
NAMES = ("train-resnet md-sim bwa-align gromacs-npt cp2k-relax vasp-scf wrf-d02 preproc "
         "eval-llm hyperopt blastp snakemake-rule jupyter postproc cryo-em-refine").split()
STATES = [("RUNNING", "R", 30), ("PENDING", "PD", 66), ("COMPLETING", "CG", 2),
          ("CONFIGURING", "CF", 1), ("SUSPENDED", "S", 1)]
REASONS = [("Priority", 50), ("Resources", 20), ("Dependency", 8), ("QOSMaxJobsPerUserLimit", 6),
           ("AssocGrpCPULimit", 4), ("BeginTime", 3), ("JobHeldUser", 3),
           ("ReqNodeNotAvail, Reserved for maintenance", 3), ("DependencyNeverSatisfied", 2),
           ("launch failed requeued held", 1)]
LIMITS = [1800, 3600, 4 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400]
WIDTH = {p[1]: 3 if p[2] > 99 else 2 for p in PARTITIONS}   # node name digits: c001, g01

# One job = one tuple in this order; names after "|" are raw values for JSON/scontrol.
FIELDS = ("jobid arrayjobid arraytaskid jobarrayid name state st user uid account group "
          "partition qos priority timeused timelimit timeleft starttime submittime endtime "
          "nodes cpus minmemory nodelist reason reasonlist tres workdir command stdout stderr "
          "dependency gres features comment batchhost exitcode reservation cluster nice "
          "eligibletime | _submit _start _limit _elapsed _prio _mem _node0 _pfx").split()
FIELDS.remove("|")
IX = {f: i for i, f in enumerate(FIELDS)}
TITLES = dict(jobid="JOBID", arrayjobid="ARRAY_JOB_ID", arraytaskid="ARRAY_TASK_ID",
              jobarrayid="JOBID", st="ST", user="USER", uid="UID", timeused="TIME",
              timelimit="TIME_LIMIT", timeleft="TIME_LEFT", starttime="START_TIME",
              submittime="SUBMIT_TIME", endtime="END_TIME", cpus="CPUS", minmemory="MIN_MEMORY",
              reasonlist="NODELIST(REASON)", tres="TRES_ALLOC", workdir="WORK_DIR",
              gres="TRES_PER_NODE", batchhost="EXEC_HOST", exitcode="EXIT_CODE",
              eligibletime="ELIGIBLE_TIME")
# squeue -o letters and -O names (lower case) -> field
LETTERS = dict(A="jobid", F="arrayjobid", K="arraytaskid", i="jobarrayid", j="name", T="state",
               t="st", u="user", U="uid", a="account", g="group", P="partition", q="qos",
               Q="priority", M="timeused", l="timelimit", L="timeleft", S="starttime",
               V="submittime", e="endtime", D="nodes", C="cpus", m="minmemory", N="nodelist",
               r="reason", R="reasonlist", Z="workdir", o="command", E="dependency", b="gres",
               f="features", k="comment", B="batchhost", v="reservation", y="nice")
LONG = {f: f for f in FIELDS if not f.startswith("_")}
LONG.update(username="user", userid="uid", groupid="uid", groupname="group", statecompact="st", nodes="nodelist",
            prioritylong="priority", numnodes="nodes", numcpus="cpus", feature="features",
            **{"tres": "tres", "tres-alloc": "tres", "tres-per-node": "gres", "exit_code": "exitcode"})


def dur(s):
    d, s = divmod(s, 86400); h, s = divmod(s, 3600); m, s = divmod(s, 60)
    return f"{d}-{h:02}:{m:02}:{s:02}" if d else f"{h}:{m:02}:{s:02}" if h else f"{m}:{s:02}"


def iso(t):
    return datetime.fromtimestamp(t).isoformat() if t else "N/A"


def hostlist(pfx, idx, width=3):
    """Slurm-style compressed host list: c[001-004,009]."""
    idx, runs = sorted(idx), []
    for i in idx:
        if runs and i == runs[-1][1] + 1: runs[-1][1] = i
        else: runs.append([i, i])
    if len(idx) == 1: return f"{pfx}{idx[0]:0{width}}"
    return pfx + "[" + ",".join(f"{a:0{width}}" if a == b else f"{a:0{width}}-{b:0{width}}"
                                for a, b in runs) + "]"


def weighted(table):
    """A picker for rows whose last item is a weight; takes a uniform [0, 1) number."""
    cum = list(itertools.accumulate(t[-1] for t in table))
    return lambda u: table[bisect.bisect(cum, u * cum[-1])]


def make_jobs(n, seed, now, epoch=None):
    rng, jobs, next_id, k = random.Random(seed), [], 4200000, 0
    r = rng.random
    one = lambda seq: seq[int(r() * len(seq))]
    part_of, state_of, reason_of = weighted(PARTITIONS), weighted(STATES), weighted(REASONS)
    tdur, tiso = functools.lru_cache(None)(dur), functools.lru_cache(None)(iso)
    while k < n:
        size = min(10 + int(r() * 291) if r() < 0.002 else 1, n - k)   # array job or single job
        part, pfx, pnodes, cpn, mem, maxt, _ = part_of(r())
        uid = int(r() * len(USERS)); user = USERS[uid]; uid += 1000
        name = one(NAMES); acct = ACCOUNTS[uid % len(ACCOUNTS)]
        limit = min(one(LIMITS), maxt)
        nnodes = min(one([1] * 8 + [2, 4, 8, 16]), pnodes) if part != "gpu" else 1
        cpus = nnodes * one([1, 4, 8, 16, 32, cpn])
        memmb = cpus * one([2000, 4000, 8000])
        gres = f"gres:gpu:{one([1, 2, 4, 8])}" if part == "gpu" else "N/A"
        submit = (now if epoch is None else epoch) - 60 - int(r() * 5 * 86400)
        arr_state, arr_reason = state_of(r()), reason_of(r())[0]
        running_tasks = int(r() * min(size, 20)) if size > 1 else 0
        base = next_id
        wd = f"/home/{user}/proj{uid % 7}/{name}"
        tres = f"cpu={cpus},mem={memmb}M,node={nnodes},billing={cpus}"
        dep = f"afterok:{base - 1}(unfulfilled)" if arr_reason == "Dependency" else "(null)"
        for t in range(size):
            if size > 1:
                state, st, _ = STATES[0] if t < running_tasks else STATES[1]
                jid = base + t + 1 if st != "PD" else base
                arrjob, task, jarr = str(base), str(t), f"{base}_{t}"
            else:
                state, st, _ = arr_state
                jid = base
                arrjob, task, jarr = str(base), "N/A", str(base)
            prio = 4294900000 - int(r() * 200000)
            if st == "PD":
                reason, elapsed, start, node0, nodelist, host = arr_reason, 0, 0, -1, "", ""
                rlist = f"({reason})"
            else:
                reason, elapsed = "None", (int(r() * limit) + now) % limit
                start = now - elapsed
                node0 = int(r() * (pnodes - nnodes + 1))
                nodelist = rlist = hostlist(pfx, range(node0, node0 + nnodes), WIDTH[pfx])
                host = f"{pfx}{node0:0{WIDTH[pfx]}}"
            out = f"{wd}/logs/{name}-{jarr}.out"
            jobs.append((
                str(jid), arrjob, task, jarr, name, state, st, user, str(uid), acct, acct, part,
                "normal", str(prio), tdur(elapsed), tdur(limit), tdur(limit - elapsed),
                tiso(start), tiso(submit), tiso(start + limit if start else 0),
                str(nnodes), str(cpus), f"{memmb // nnodes}M", nodelist, reason, rlist, tres, wd,
                f"{wd}/run_{name}.sbatch", out, out, dep if st == "PD" else "(null)", gres, "(null)",
                "(null)", host, "0:0", "(null)", CLUSTER, "0", tiso(submit),
                submit, start, limit, elapsed, prio, memmb, node0, pfx))
        next_id += size + 1 if size > 1 else 1
        k += size
    return jobs


def log_call(cmd, args):
    path = os.environ.get("FAKE_SLURM_LOG", "/tmp/fake-slurm-calls.log")
    with open(path, "a") as f:
        f.write(f"{time.time():.3f}\t{cmd}\t{shlex.join(args)}\n")


def load_jobs():
    now = int(os.environ.get("FAKE_SLURM_NOW") or time.time())
    n = int(os.environ.get("FAKE_SLURM_JOBS", 100000))
    epoch = int(os.environ["FAKE_SLURM_EPOCH"]) if os.environ.get("FAKE_SLURM_EPOCH") else None
    # FAKE_SLURM_CHURN (as the shared harness's): share of the queue that leaves per minute
    # since the epoch, replaced by as many newly submitted jobs, so a poll sees a real site's flow
    churn = float(os.environ.get("FAKE_SLURM_CHURN") or 0)
    shift = int(max(0, now - epoch) / 60 * churn * n) if churn and epoch else 0
    jobs = make_jobs(n + shift, int(os.environ.get("FAKE_SLURM_SEED", 1)), now, epoch)
    return jobs[shift:]


def col(idx, width, right):
    """One str.format replacement field: Slurm pads to width and cuts at width."""
    if idx is None: return ""
    return f"{{{idx}:{'>' if right else '<'}{width}.{width}}}" if width else f"{{{idx}}}"


def esc(s):
    return s.replace("{", "{{").replace("}", "}}")


def format_template(spec, names):
    """squeue/sinfo -o: '%.18i %P' -> '{3:>18.18} {11}'."""
    def repl(m):
        f = names.get(m.group(3))
        return col(IX[f] if f else None, int(m.group(2) or 0), bool(m.group(1)))
    return re.sub(r"%(\.?)(\d*)([A-Za-z])", repl, esc(spec))


def Format_template(spec, names):
    """squeue -O: 'jobid:###x###,name:.10' -> '{0}###x###{4:>10.10}'; no ':' means 20 wide."""
    out = []
    for tok in spec.split(","):
        name, colon, rest = tok.partition(":")
        right = rest.startswith(".")
        rest = rest[1:] if right else rest
        digits = re.match(r"\d*", rest).group()
        width = int(digits) if digits else (0 if colon else 20)
        f = names.get(name.lower())
        if f is None: print(f"squeue: error: Invalid job format specification: {name}", file=sys.stderr)
        out.append(col(IX[f] if f else None, width, right) + esc(rest[len(digits):]))
    return "".join(out)


def header(template):
    return template.format(*[TITLES.get(f, f.upper()) for f in FIELDS])


def write_rows(template, rows, noheader):
    w = sys.stdout.write
    if not noheader: w(header(template) + "\n")
    fmt = template.format
    for i in range(0, len(rows), 2000):
        w("".join(fmt(*r) + "\n" for r in rows[i:i + 2000]))


def split(values):
    return {v for s in values or [] for v in s.split(",") if v}


def collapse_arrays(rows):
    """Without --array, Slurm shows the pending tasks of one array job as one row: 123_[4-99]."""
    out, i, A, T, S = [], 0, IX["arrayjobid"], IX["arraytaskid"], IX["st"]
    while i < len(rows):
        r, j = rows[i], i
        if r[T] != "N/A" and r[S] == "PD":
            while j + 1 < len(rows) and rows[j + 1][A] == r[A] and rows[j + 1][S] == "PD": j += 1
            if j > i:
                r = list(r); r[T] = f"[{rows[i][T]}-{rows[j][T]}]"; r[IX["jobarrayid"]] = f"{r[A]}_{r[T]}"
        out.append(tuple(r)); i = j + 1
    return out


def job_json(j, tmpl):
    g = dict(zip(FIELDS, j))
    d = dict(tmpl["pending_job" if g["st"] == "PD" else "running_job"])
    arr = g["arraytaskid"] != "N/A"
    d.update(account=g["account"], array_job_id=int(g["arrayjobid"]) if arr else 0,
             array_task_id=int(g["arraytaskid"]) if arr else None, batch_host=g["batchhost"],
             cluster=CLUSTER, command=g["command"], cpus=int(g["cpus"]),
             current_working_directory=g["workdir"], end_time=g["_start"] + g["_limit"] if g["_start"] else 0,
             eligible_time=g["_submit"], accrue_time=g["_submit"], group_name=g["group"],
             job_id=int(g["jobid"]), job_state=g["state"], name=g["name"], node_count=int(g["nodes"]),
             nodes=g["nodelist"], partition=g["partition"], priority=g["_prio"], start_time=g["_start"],
             state_reason=g["reason"], submit_time=g["_submit"], time_limit=g["_limit"] // 60,
             tres_req_str=g["tres"], tres_alloc_str=g["tres"] if g["st"] != "PD" else "",
             user_id=int(g["uid"]), user_name=g["user"], memory_per_node=g["_mem"], memory_per_cpu=None)
    if g["st"] != "PD":
        n, w = int(g["nodes"]), WIDTH[g["_pfx"]]
        d["job_resources"] = {"nodes": g["nodelist"], "allocated_cores": int(g["cpus"]), "allocated_hosts": n,
                              "allocated_nodes": [{"sockets": {}, "nodename": f"{g['_pfx']}{i:0{w}}",
                                                   "cpus_used": 0, "memory_used": 0,
                                                   "memory_allocated": g["_mem"] // n}
                                                  for i in range(g["_node0"], g["_node0"] + n)]}
    return d


VERSION = os.environ.get("FAKE_SLURM_VERSION", "22.05.8")


def release():
    return tuple(int(x) for x in VERSION.split(".")[:2])


def squeue(argv):
    if "--only-job-state" in argv and release() < (23, 11):
        print("squeue: unrecognized option '--only-job-state'", file=sys.stderr)
        sys.exit(1)
    p = argparse.ArgumentParser(prog="squeue", add_help=False)
    p.add_argument("--only-job-state", action="store_true")
    p.add_argument("-o", "--format"); p.add_argument("-O", "--Format")
    p.add_argument("-h", "--noheader", action="store_true"); p.add_argument("-r", "--array", action="store_true")
    p.add_argument("--json", action="store_true"); p.add_argument("--me", action="store_true")
    for short, long in [("-t", "--states"), ("-u", "--user"), ("-p", "--partition"), ("-j", "--jobs"),
                        ("-n", "--name"), ("-A", "--account"), ("-q", "--qos")]:
        p.add_argument(short, long, action="append")
    a, _ = p.parse_known_args(argv)       # everything else (-S, -M, --local, -i ...) is accepted and ignored
    rows = load_jobs()
    if a.json:                            # 22.05: "All other formatting and filtering arguments will be ignored."
        tmpl = json.load(open(os.path.join(HERE, "squeue_json_template.json")))
        w = sys.stdout.write
        w('{\n  "meta": ' + json.dumps(tmpl["meta"]) + ',\n  "errors": [\n  ],\n  "jobs": [\n')
        for i, r in enumerate(rows):
            w(("" if i == 0 else ",\n") + json.dumps(job_json(r, tmpl)))
        w("\n  ]\n}\n")
        return
    states = {s.upper() for s in split(a.states)}
    users = split(a.user) | ({getpass.getuser()} if a.me else set())
    for key, want in [("user", users), ("partition", split(a.partition)), ("name", split(a.name)),
                      ("account", split(a.account)), ("qos", split(a.qos))]:
        if want: rows = [r for r in rows if r[IX[key]] in want]
    if states and "ALL" not in states:
        rows = [r for r in rows if r[IX["state"]] in states or r[IX["st"]] in states]
    if a.jobs:
        ids = split(a.jobs)
        rows = [r for r in rows if r[0] in ids or r[1] in ids or r[3] in ids]
    if not a.array: rows = collapse_arrays(rows)
    if a.Format: template = Format_template(a.Format, LONG)
    else: template = format_template(a.format or "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R", LETTERS)
    write_rows(template, rows, a.noheader)


def nodes():
    """Every node once: (name, partitions, state, cpus, alloc cpus, mem MB)."""
    rng, seen = random.Random(int(os.environ.get("FAKE_SLURM_SEED", 1)) + 7), {}
    for part, pfx, count, cpn, mem, _, _ in PARTITIONS:
        for i in range(count):
            name = f"{pfx}{i:0{WIDTH[pfx]}}"
            if name not in seen:
                st = rng.choices(["allocated", "mixed", "idle", "drained", "down", "draining"],
                                 [70, 15, 8, 4, 2, 1])[0]
                alloc = {"allocated": cpn, "mixed": cpn // 2, "draining": cpn // 2}.get(st, 0)
                seen[name] = [name, [], st, cpn, alloc, mem, pfx, i]
            seen[name][1].append(part)
    return list(seen.values())


SHORT_STATE = dict(allocated="alloc", mixed="mix", idle="idle", drained="drain", down="down", draining="drng")
JSON_STATE = dict(allocated="allocated", mixed="mixed", idle="idle", drained="idle", down="down", draining="mixed")


def sinfo(argv):
    p = argparse.ArgumentParser(prog="sinfo", add_help=False)
    p.add_argument("-o", "--format"); p.add_argument("-h", "--noheader", action="store_true")
    p.add_argument("-N", "--Node", action="store_true"); p.add_argument("-R", "--list-reasons", action="store_true")
    p.add_argument("-p", "--partition", action="append"); p.add_argument("--json", action="store_true")
    a, _ = p.parse_known_args(argv)
    ns, want = nodes(), split(a.partition)
    if a.json:
        print(json.dumps({"meta": {}, "errors": [], "nodes": [
            {"name": n[0], "hostname": n[0], "partitions": n[1], "state": JSON_STATE[n[2]],
             "state_flags": ["DRAIN"] if n[2].startswith("drain") else [], "cpus": n[3], "alloc_cpus": n[4],
             "idle_cpus": n[3] - n[4], "real_memory": n[5], "reason": "disk errors" if n[2] in ("drained", "down") else ""}
            for n in ns]}, indent=2))
        return
    if a.list_reasons:
        fmt, rows = a.format or "%20E %9u %19H %N", []
        for st in ("drained", "down", "draining"):
            idx = [n for n in ns if n[2] == st]
            for pfx in sorted({n[6] for n in idx}):
                rows.append(dict(E="disk errors", u="root", H="2026-11-28T09:00:00",
                                 N=hostlist(pfx, [n[7] for n in idx if n[6] == pfx], WIDTH[pfx])))
    else:
        fmt = a.format or ("%#N %.9P %.5T %.4c %.8z %.6m %.8d %.6w %.8f %20E" if a.Node
                           else "%9P %.5a %.10l %.6D %.6t %N")
        rows = []
        for part, pfx, count, cpn, mem, maxt, _ in PARTITIONS:
            if want and part not in want: continue
            pn = [n for n in ns if part in n[1]]
            name = part + ("*" if part == "cpu" else "")
            groups = [[n] for n in pn] if a.Node else [[n for n in pn if n[2] == st] for st in SHORT_STATE]
            for g in filter(None, groups):
                n0 = g[0]
                rows.append(dict(P=name, R=part, a="up", l=dur(maxt), D=len(g), t=SHORT_STATE[n0[2]], T=n0[2],
                                 N=hostlist(pfx, [n[7] for n in g], WIDTH[pfx]), c=cpn,
                                 C=f"{n0[4] * len(g)}/{(cpn - n0[4]) * len(g)}/0/{cpn * len(g)}", m=mem,
                                 e=mem // 2, O="1.00", E="disk errors" if n0[2] in ("drained", "down") else "none",
                                 u="root", H="Unknown", z="2:16:2", d=0, w=1, f="(null)", G="(null)"))
    fmt = fmt.replace("%#N", "%10N")
    letters = sorted(set(re.findall(r"%\.?\d*([A-Za-z])", fmt)))
    tmpl = re.sub(r"%(\.?)(\d*)([A-Za-z])", lambda m: col(letters.index(m.group(3)), int(m.group(2) or 0),
                                                            bool(m.group(1))), esc(fmt))
    titles = dict(P="PARTITION", R="PARTITION", a="AVAIL", l="TIMELIMIT", D="NODES", t="STATE", T="STATE",
                  N="NODELIST", c="CPUS", C="CPUS(A/I/O/T)", m="MEMORY", e="FREE_MEM", O="CPU_LOAD",
                  E="REASON", u="USER", H="TIMESTAMP", z="S:C:T", d="TMP_DISK", w="WEIGHT", f="AVAIL_FEATURES",
                  G="GRES")
    if not a.noheader: print(tmpl.format(*[titles.get(c, c) for c in letters]))
    for r in rows: print(tmpl.format(*[str(r.get(c, "")) for c in letters]))


def scontrol(argv):
    if argv[:1] in (["--version"], ["-V"]):
        print(f"slurm {VERSION}")
        return
    one_line = "-o" in argv or "--oneliner" in argv
    args = [x for x in argv if not x.startswith("-")]
    if len(args) < 2 or args[0] != "show":
        return                                # update, hold, release, requeue...: accepted silently
    what, ident = args[1].lower(), (args[2] if len(args) > 2 else None)
    if what == "job":
        recs = []
        for j in load_jobs():
            g = dict(zip(FIELDS, j))
            if ident and ident not in (g["jobid"], g["jobarrayid"], g["arrayjobid"]): continue
            recs.append([("JobId", g["jobid"]), ("JobName", g["name"]), ("UserId", f"{g['user']}({g['uid']})"),
                         ("Account", g["account"]), ("QOS", g["qos"]), ("Priority", g["priority"]),
                         ("JobState", g["state"]), ("Reason", g["reason"]), ("Dependency", g["dependency"]),
                         ("RunTime", g["timeused"]), ("TimeLimit", g["timelimit"]), ("SubmitTime", g["submittime"]),
                         ("StartTime", g["starttime"]), ("EndTime", g["endtime"]), ("Partition", g["partition"]),
                         ("NodeList", g["nodelist"] or "(null)"), ("BatchHost", g["batchhost"] or "(null)"),
                         ("NumNodes", g["nodes"]), ("NumCPUs", g["cpus"]), ("TRES", g["tres"]),
                         ("Command", g["command"]), ("WorkDir", g["workdir"]), ("StdErr", g["stderr"]),
                         ("StdIn", "/dev/null"), ("StdOut", g["stdout"])])
            if ident and g["jobid"] == ident: break
        if ident and not recs:
            print("slurm_load_jobs error: Invalid job id specified", file=sys.stderr); sys.exit(1)
    elif what == "node":
        recs = [[("NodeName", n[0]), ("CPUAlloc", n[4]), ("CPUTot", n[3]), ("RealMemory", n[5]),
                 ("State", n[2].upper()), ("Partitions", ",".join(n[1]))]
                for n in nodes() if not ident or n[0] == ident]
    elif what == "partition":
        recs = [[("PartitionName", p[0]), ("Default", "YES" if p[0] == "cpu" else "NO"), ("MaxTime", dur(p[5])),
                 ("TotalNodes", p[2]), ("TotalCPUs", p[2] * p[3]), ("State", "UP")]
                for p in PARTITIONS if not ident or p[0] == ident]
    else:
        return
    for rec in recs:
        kv = [f"{k}={v}" for k, v in rec]
        if one_line: print(" ".join(kv))
        else: print("\n".join("   " * (i > 0) + " ".join(kv[i:i + 4]) for i in range(0, len(kv), 4)) + "\n")


def sacct(argv):
    p = argparse.ArgumentParser(prog="sacct", add_help=False)
    p.add_argument("-o", "--format"); p.add_argument("-n", "--noheader", action="store_true")
    p.add_argument("-P", "--parsable2", action="store_true"); p.add_argument("-p", "--parsable", action="store_true")
    p.add_argument("-X", "--allocations", action="store_true"); p.add_argument("-j", "--jobs", action="append")
    p.add_argument("--json", action="store_true")
    p.add_argument("-s", "--state")   # as sacct: only jobs in these states (names, comma-separated)
    a, _ = p.parse_known_args(argv)
    ids, out = split(a.jobs), []
    states = {x.strip().upper() for x in a.state.split(",")} if a.state else None
    for j in load_jobs():
        g = dict(zip(FIELDS, j))
        if ids and not ids & {g["jobid"], g["jobarrayid"], g["arrayjobid"]}: continue
        if states is not None and g["state"] not in states: continue
        hms = lambda s: f"{s // 86400}-" * (s >= 86400) + time.strftime("%H:%M:%S", time.gmtime(s))
        rec = dict(jobid=g["jobarrayid"], jobidraw=g["jobid"], jobname=g["name"], partition=g["partition"],
                   account=g["account"], user=g["user"], alloccpus=g["cpus"], state=g["state"], exitcode="0:0",
                   reqmem=f"{g['_mem']}M", maxrss="", elapsed=hms(g["_elapsed"]), timelimit=hms(g["_limit"]), nodelist=g["nodelist"]
                   or "None assigned", reason=g["reason"], start=g["starttime"].replace("N/A", "Unknown"),
                   end="Unknown", submit=g["submittime"], workdir=g["workdir"])
        out.append(rec)
        if g["st"] != "PD" and not a.allocations:
            out.append(dict(rec, jobid=rec["jobid"] + ".batch", jobname="batch", partition="", account=g["account"],
                            user="", reqmem="", maxrss="1024K", timelimit="", reason=""))
    if a.json:
        print(json.dumps({"meta": {}, "errors": [], "jobs": [
            {"job_id": int(r["jobidraw"]), "name": r["jobname"], "partition": r["partition"], "account": r["account"],
             "user": r["user"], "nodes": r["nodelist"], "state": {"current": r["state"], "reason": r["reason"]},
             "exit_code": {"status": "SUCCESS", "return_code": 0}, "steps": []}
            for r in out if "." not in r["jobid"]]}, indent=2))
        return
    fields = (a.format or "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode").split(",")
    names = [f.split("%")[0].lower() for f in fields]
    if a.parsable2 or a.parsable:
        end = "|" if a.parsable else ""
        if not a.noheader: print("|".join(f.split("%")[0] for f in fields) + end)
        for r in out: print("|".join(str(r.get(n, "")) for n in names) + end)
    else:
        widths = [int(f.split("%")[1]) if "%" in f else 10 for f in fields]
        if not a.noheader:
            print(" ".join(f"{f.split('%')[0]:>{w}.{w}}" for f, w in zip(fields, widths)))
            print(" ".join("-" * w for w in widths))
        for r in out: print(" ".join(f"{str(r.get(n, '')):>{w}.{w}}" for n, w in zip(names, widths)))


def sstat(argv):
    """sstat -a -n -P -j ID,... --format=F,...: each listed RUNNING job's batch step (and step 0
    on several nodes), its MaxRSS a steady share of its request (seeded by the job id: 10 % to
    99 %, one job in 20 past 90 %); other ids are a line on stderr, as sstat says them."""
    p = argparse.ArgumentParser(prog="sstat", add_help=False)
    p.add_argument("-j", "--jobs", action="append"); p.add_argument("-o", "--format")
    p.add_argument("-n", "--noheader", action="store_true"); p.add_argument("-P", "--parsable2", action="store_true")
    p.add_argument("-p", "--parsable", action="store_true"); p.add_argument("-a", "--allsteps", action="store_true")
    a, _ = p.parse_known_args(argv)
    ids = split(a.jobs)
    fields = (a.format or "JobID,MaxRSS,MaxRSSNode,AveRSS,NTasks,Nodelist,AveCPU").split(",")
    found = set()
    end = "|" if a.parsable else ""
    if not a.noheader: print("|".join(fields) + end)
    for j in load_jobs():
        g = dict(zip(FIELDS, j))
        jid = g["jobarrayid"] if g["jobarrayid"] in ids else g["jobid"]   # sstat takes 123_4 too
        if jid not in ids or g["st"] != "R": continue
        found.add(jid)
        rng = random.Random(int(g["jobid"]))
        share = 0.92 + 0.07 * rng.random() if rng.random() < 0.05 else 0.1 + 0.8 * rng.random()
        nnodes = int(g["nodes"])
        per_node_kib = int(g["_mem"] // nnodes * 1024 * share)
        steps = [("batch", 1, g["batchhost"])] + ([("0", nnodes, g["nodelist"])] if nnodes > 1 else [])
        for step, ntasks, nodes in steps:
            rec = dict(jobid=f"{jid}.{step}", maxrss=f"{per_node_kib}K", maxrssnode=g["batchhost"],
                       averss=f"{per_node_kib}K", ntasks=str(ntasks), nodelist=nodes,
                       avecpu="00:10:00")
            print("|".join(rec.get(f.lower(), "") or "" for f in fields) + end)
    for jid in sorted(ids - found):
        print(f"sstat: error: couldn't get steps for job {jid}", file=sys.stderr)


COMMANDS = {"squeue": squeue, "sinfo": sinfo, "scontrol": scontrol, "sacct": sacct, "sstat": sstat}


def main():
    cmd = os.path.basename(sys.argv[0]).removesuffix(".py")
    log_call(cmd, sys.argv[1:])
    cache = os.environ.get("FAKE_SLURM_CACHE")
    if cache and os.environ.get("FAKE_SLURM_NOW"):
        import hashlib
        key = hashlib.sha256(repr((cmd, sys.argv[1:], os.environ.get("FAKE_SLURM_JOBS"),
                                   os.environ.get("FAKE_SLURM_SEED"), os.environ["FAKE_SLURM_NOW"])).encode()).hexdigest()
        path = os.path.join(cache, key)
        if not os.path.exists(path):
            os.makedirs(cache, exist_ok=True)
            with open(path + ".tmp", "w") as f:
                real_stdout, sys.stdout = sys.stdout, f
                try:
                    COMMANDS[cmd](sys.argv[1:])
                finally:
                    sys.stdout = real_stdout
            os.replace(path + ".tmp", path)
        with open(path, "rb") as f:
            sys.stdout.buffer.write(f.read())
        return
    try:
        COMMANDS[cmd](sys.argv[1:])
        sys.stdout.flush()
    except BrokenPipeError:               # reader went away (e.g. `| head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except KeyError:
        sys.exit(f"fakeslurm: unknown command {cmd!r}; call it through a symlink named squeue/sinfo/...")


if __name__ == "__main__":
    main()
