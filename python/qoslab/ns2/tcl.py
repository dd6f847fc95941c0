"""The ns-2 Tcl script of a resolved scenario: nodes, links and their queues, flows, and the
measurement procedures that write one JSON results file (no per-packet tracing)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from qoslab import schema
from qoslab.ns2.capability import core_export, ds_active, tcp_agent
from qoslab.ns2.literals import is_int, tcl_comment, tcl_number, tcl_quote, tcl_value
from qoslab.ns2.plan import DsPlan, DsQueue, ds_plan, unsupported_reason

#: ``rate_`` of a Poisson source, as a multiple of its mean rate (see module doc).
POISSON_RATE_FACTOR = 1.0e6


#: TTL given to every agent (ns-2's default of 32 would cap path length).
AGENT_TTL = 255


#: ns-2 agent counters are 32-bit; poll them often enough to see every wrap.
_COUNTER_SPAN_BYTES = 2**31


#: TCP agent settings pinned regardless of the scenario (ns-2.35 defaults
#: noted where they differ).  Scenario-driven settings are added per flow.
#: Read at each :func:`to_tcl` call, so a caller may change an entry, e.g.
#: ``singledup_`` to "1" to compare against ns-2's limited transmit.
TCP_FIXED_PARAMS: dict[str, str] = {
    "delay_growth_": "true",  # ns default: cwnd 1 until the SYN is acked
    "useHeaders_": "true",  # ns default: 40 header bytes on every data packet
    "windowInitOption_": "1",  # initial cwnd = windowInit_
    "windowOption_": "1",  # standard AIMD
    "singledup_": "1",  # ns default: limited transmit (RFC 3042), as qoslab
    "numdupacks_": "3",
    "numdupacksFrac_": "-1",
    "bugFix_": "true",
    "timestamps_": "false",
    "ts_resetRTO_": "false",
    "overhead_": "0",
    "maxcwnd_": "0",
    "max_ssthresh_": "0",
    "decrease_num_": "0.5",
    "increase_num_": "1.0",
    "aggressive_maxburst_": "1",
    "slow_start_restart_": "true",
    "rfc2988_": "true",
    "timerfix_": "true",
    "srtt_init_": "0",
    "rttvar_init_": "12",
    "rttvar_exp_": "2",
    "T_SRTT_BITS": "3",
    "T_RTTVAR_BITS": "2",
    "frto_enabled_": "0",
    "sfrto_enabled_": "0",
    "QOption_": "0",
    "EnblRTTCtr_": "0",
    "noFastRetrans_": "false",
    "qs_enabled_": "false",
    "old_ecn_": "0",
}


def _ns_seed(seed: int) -> int:
    """Map any integer seed to a well-mixed ns-2 seed in 1..2**31-2 (splitmix64).

    ns-2's MRG32k3a sets all six state words to the raw seed, so raw seeds s
    and k*s give streams related by multiplication by k (mod m): seeds 1, 2, 3
    would draw visibly correlated numbers.  Mixing the seed first avoids that.
    """
    mask = (1 << 64) - 1
    z = ((seed & mask) + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    z ^= z >> 31
    return z % (2**31 - 2) + 1


def _queue_settings(q: dict[str, Any]) -> list[tuple[str, str]]:
    """Return the ``$q set`` pairs configuring one queue direction, as the core describes them."""
    exp = core_export(q)
    assert exp is not None, "checked by unsupported_reason"
    return [(str(k), tcl_value(v)) for k, v in exp["settings"]]


_TCL_PROCS = r"""
# ---- measurement procedures (no per-packet tracing) ----
proc qoslab_poll {} {
    global qoslab_nflows qoslab_rx qoslab_rx_last qoslab_rx_total
    for {set i 0} {$i < $qoslab_nflows} {incr i} {
        set v [$qoslab_rx($i) set bytes_]
        set d [expr {($v - $qoslab_rx_last($i)) & 0xFFFFFFFF}]
        set qoslab_rx_total($i) [expr {$qoslab_rx_total($i) + $d}]
        set qoslab_rx_last($i) $v
    }
}

proc qoslab_mark_start {} {
    global qoslab_nflows qoslab_rx_total qoslab_win_start
    qoslab_poll
    for {set i 0} {$i < $qoslab_nflows} {incr i} {
        set qoslab_win_start($i) $qoslab_rx_total($i)
    }
}

proc qoslab_mark_end {} {
    global qoslab_nflows qoslab_rx_total qoslab_win_end qoslab_end_done
    if {$qoslab_end_done} { return }
    qoslab_poll
    for {set i 0} {$i < $qoslab_nflows} {incr i} {
        set qoslab_win_end($i) $qoslab_rx_total($i)
    }
    set qoslab_end_done 1
}

proc qoslab_monitor {lnk red} {
    global ns
    if {$red} {
        set qm [new QueueMonitor/ED]
    } else {
        set qm [new QueueMonitor]
    }
    set in [new SnoopQueue/In]
    set out [new SnoopQueue/Out]
    $lnk attach-monitors $in $out [new SnoopQueue/Drop] $qm
    if {$red} {
        set ed [new SnoopQueue/EDrop]
        $ed set-monitor $qm
        $ed target [$ns set nullAgent_]
        [$lnk queue] early-drop-target $ed
    }
    return $qm
}

proc qoslab_tx_counter {agent} {
    set qm [new QueueMonitor]
    set sn [new SnoopQueue/In]
    $sn set-monitor $qm
    $sn target [$agent target]
    $agent target $sn
    return $qm
}

# Per-codepoint counters of a dsRED queue (diffserv/dsred.cc getStat) and the
# lengths of its virtual queues: raw material for by_dscp, decoded in Python.
proc qoslab_dsred_raw {j} {
    global qoslab_dsq qoslab_dscps qoslab_dsvq
    set q $qoslab_dsq($j)
    set cps {}
    foreach cp $qoslab_dscps($j) {
        set pk [expr {int([$q getStat pkts $cp])}]
        set dr [expr {int([$q getStat drops $cp])}]
        set ed [expr {int([$q getStat edrops $cp])}]
        lappend cps "\[$cp, $pk, $dr, $ed\]"
    }
    set vqs {}
    foreach v $qoslab_dsvq($j) {
        set n [expr {int([$q getCurrentV [lindex $v 0] [lindex $v 1]])}]
        lappend vqs "\[[lindex $v 0], [lindex $v 1], $n\]"
    }
    return "\{\"cp\": \[[join $cps {, }]\], \"vq\": \[[join $vqs {, }]\]\}"
}

# Minimal JSON emitter: values are already JSON-encoded text.
proc qoslab_obj {pairs} {
    set items {}
    foreach {k v} $pairs {
        lappend items "\"$k\": $v"
    }
    return "\{[join $items {, }]\}"
}

proc qoslab_arr {items} {
    return "\[[join $items {, }]\]"
}

proc qoslab_finish {} {
    global qoslab_nflows qoslab_fname qoslab_kind qoslab_tx qoslab_rx qoslab_psize
    global qoslab_win_start qoslab_win_end qoslab_rx_total qoslab_win_len
    global qoslab_nlinks qoslab_lname qoslab_ldir qoslab_qm qoslab_red
    global qoslab_out qoslab_seed qoslab_t0 qoslab_dsq qoslab_trace ns
    qoslab_mark_end
    qoslab_poll
    set flows {}
    for {set i 0} {$i < $qoslab_nflows} {incr i} {
        set win [expr {$qoslab_win_end($i) - $qoslab_win_start($i)}]
        set thr [expr {double($win) * 8.0 / $qoslab_win_len}]
        if {$qoslab_kind($i) eq "tcp"} {
            set deliv [expr {$qoslab_rx_total($i) / $qoslab_psize($i)}]
            set sent [$qoslab_tx($i) set ndatapack_]
            set rexmit [$qoslab_tx($i) set nrexmitpack_]
        } else {
            set deliv [$qoslab_rx($i) set npkts_]
            set sent [$qoslab_tx($i) set parrivals_]
            set rexmit 0
        }
        lappend flows [qoslab_obj [list \
            name $qoslab_fname($i) throughput_bps $thr \
            delivered_packets $deliv sent_packets $sent \
            retransmitted_packets $rexmit]]
    }
    set links {}
    set total_drops 0
    set hops 0
    for {set j 0} {$j < $qoslab_nlinks} {incr j} {
        set qm $qoslab_qm($j)
        set arr [$qm set parrivals_]
        set dep [$qm set pdepartures_]
        set drops [$qm set pdrops_]
        if {$qoslab_red($j)} {
            set early [$qm set epdrops_]
        } else {
            set early 0
        }
        set forced [expr {$drops - $early}]
        incr total_drops $drops
        incr hops $dep
        set pairs [list \
            name $qoslab_lname($j) direction "\"$qoslab_ldir($j)\"" \
            arrivals $arr departures $dep drops $drops \
            early_drops $early forced_drops $forced]
        if {[info exists qoslab_dsq($j)]} {
            lappend pairs dsred [qoslab_dsred_raw $j]
        }
        lappend links [qoslab_obj $pairs]
    }
    set wall [expr {([clock milliseconds] - $qoslab_t0) / 1000.0}]
    set json [qoslab_obj [list \
        seed $qoslab_seed wall_time_s $wall \
        flows [qoslab_arr $flows] links [qoslab_arr $links] \
        total_drops $total_drops packet_hops $hops]]
    set f [open $qoslab_out w]
    puts $f $json
    close $f
    if {$qoslab_trace ne ""} {
        $ns flush-trace
        close $qoslab_trace
    }
    exit 0
}
"""


#: Procedures added to the script of a scenario with finite transfers (TCP flows with
#: ``size_bytes``), and the line of ``qoslab_finish`` that then also writes each transfer's
#: fields: the script of a scenario without finite transfers is exactly what it was before
#: finite transfers existed.
_TCL_FINITE_PROCS = r"""
# Finite transfers (flows with `size`): ns-2 calls `$agent done` (TcpAgent::finish, tcp.cc)
# on the first new ACK with highest_ack_ >= curseq_ - 1, i.e. when the last data segment is
# acknowledged.  The first call per finite flow records the time; bulk flows are ignored.
proc qoslab_done {agent} {
    global ns qoslab_finite_of qoslab_end
    if {![info exists qoslab_finite_of($agent)]} { return }
    set i $qoslab_finite_of($agent)
    if {![info exists qoslab_end($i)]} {
        set qoslab_end($i) [$ns now]
    }
}
Agent/TCP instproc done {} { qoslab_done $self }

# The JSON pairs of a finite flow's transfer (none for bulk and UDP flows).
proc qoslab_transfer_pairs {i} {
    global qoslab_size qoslab_nseg qoslab_start qoslab_end
    if {![info exists qoslab_size($i)]} { return {} }
    if {[info exists qoslab_end($i)]} {
        set end $qoslab_end($i)
        set fct [expr {$end - $qoslab_start($i)}]
    } else {
        set end null
        set fct null
    }
    return [list size_bytes $qoslab_size($i) segments $qoslab_nseg($i) \
        start_s $qoslab_start($i) end_s $end fct_s $fct]
}
"""

#: The end of ``qoslab_finish``'s per-flow JSON pairs, and what it becomes in a script with
#: finite transfers (Tcl 8.5's ``{*}`` splices the transfer's pairs into the list).
_FLOW_PAIRS_END = "retransmitted_packets $rexmit]]"
_FLOW_PAIRS_END_FINITE = "retransmitted_packets $rexmit {*}[qoslab_transfer_pairs $i]]]"


def finite_segments(f: dict[str, Any]) -> int | None:
    """The number of data segments of flow ``f``'s finite transfer (None for a bulk or UDP
    flow): ``ceil(size_bytes / packet_size_bytes)``, as qoslab's core counts them.  With
    ``syn`` the sender also sends the SYN (segment 0) before them."""
    size = f.get("size_bytes")
    if f["kind"] != "tcp" or size is None:
        return None
    return -(-int(size) // int(f["packet_size_bytes"]))


def _procs(resolved: dict[str, Any]) -> str:
    """The measurement procedures of the script, with those of finite transfers if any."""
    if not any(finite_segments(f) is not None for f in resolved["flows"]):
        return _TCL_PROCS
    assert _TCL_PROCS.count(_FLOW_PAIRS_END) == 1
    return _TCL_PROCS.replace(_FLOW_PAIRS_END, _FLOW_PAIRS_END_FINITE) + _TCL_FINITE_PROCS


def _poll_interval(resolved: dict[str, Any]) -> float | None:
    """Return the period at which 32-bit byte counters must be polled, if any."""
    max_bw = max((float(link["bandwidth_bps"]) for link in resolved["links"]), default=0.0)
    if max_bw <= 0:
        return None
    period = 0.5 * _COUNTER_SPAN_BYTES * 8.0 / max_bw
    return period if period < resolved["duration_s"] else None


def to_tcl(resolved: dict[str, Any], seed: int, out_path: str, *, trace: str | None = None) -> str:
    """Return an ns-2 Tcl script for ``resolved`` run with ``seed``.

    The script writes its JSON results to ``out_path`` at ``duration_s`` and exits; a relative
    ``out_path`` is taken relative to the script's own folder when ns-2 runs it (so the script
    can be moved with its results), an absolute one as it is. With ``trace``, ns-2 also writes
    its per-packet trace (``$ns trace-all``) there, relative in the same way. Raises ValueError
    if :func:`unsupported_reason` finds a problem.
    """
    return build_tcl(resolved, seed, out_path, trace=trace)[0]


def _script_path(path: str) -> str:
    """A Tcl expression for ``path``: as it is when absolute, else beside the running script."""
    if os.path.isabs(path):
        return tcl_quote(path)
    return f"[file join [file dirname [info script]] {tcl_quote(path)}]"


def build_tcl(
    resolved: dict[str, Any], seed: int, out_path: str, *, trace: str | None = None
) -> tuple[str, DsPlan | None]:
    """The script of :func:`to_tcl` and the DiffServ plan (None without DiffServ)."""
    reason = unsupported_reason(resolved)
    if reason is not None:
        raise ValueError(f"scenario cannot be exported to ns-2: {reason}")
    if not is_int(seed):
        raise ValueError("seed must be an integer")
    plan = ds_plan(resolved) if ds_active(resolved) else None

    duration = float(resolved["duration_s"])
    mstart = float(resolved["measurement"]["start_s"])
    mend = float(resolved["measurement"]["end_s"])
    node_idx = {name: i for i, name in enumerate(resolved["nodes"])}

    name_line = tcl_comment(str(resolved.get("name", "")))
    out: list[str] = [
        f"# ns-2 script generated by qoslab.ns2 for scenario: {name_line}",
        f"# seed {seed}; per-packet tracing is " + ("on" if trace else "off"),
        f"$defaultRNG seed {_ns_seed(seed)}",
        "set ns [new Simulator]",
        f"set qoslab_out {_script_path(out_path)}",
        # Before the links are made, so that each link's trace objects are created.
        *(
            [f"set qoslab_trace [open {_script_path(trace)} w]", "$ns trace-all $qoslab_trace"]
            if trace
            else []
        ),
        *([] if trace else ['set qoslab_trace ""']),
        f"set qoslab_seed {int(seed)}",
        "set qoslab_t0 [clock milliseconds]",
        f"set qoslab_win_len {tcl_number(mend - mstart)}",
        "set qoslab_end_done 0",
        _procs(resolved),
        "# ---- nodes ----",
    ]
    for name, i in node_idx.items():
        out.append(f"set n({i}) [$ns node] ;# {tcl_comment(name)}")

    out.append("# ---- links (one queue per direction) ----")
    dsq = plan.queues if plan is not None else {}
    j = 0
    for link in resolved["links"]:
        a, b = node_idx[link["a"]], node_idx[link["b"]]
        bw, delay = tcl_number(link["bandwidth_bps"]), tcl_number(link["delay_s"])
        qab, qba = link["queue_ab"], link["queue_ba"]
        cls_ab, cls_ba = (_queue_class(q, dsq.get(j + k)) for k, q in enumerate((qab, qba)))
        if cls_ab == cls_ba:
            out.append(f"$ns duplex-link $n({a}) $n({b}) {bw} {delay} {cls_ab}")
        else:
            out.append(f"$ns simplex-link $n({a}) $n({b}) {bw} {delay} {cls_ab}")
            out.append(f"$ns simplex-link $n({b}) $n({a}) {bw} {delay} {cls_ba}")
        lname = tcl_quote(json.dumps(link["name"]))
        for direction, x, y, q in (("ab", a, b, qab), ("ba", b, a, qba)):
            out.append(f"set q [[$ns link $n({x}) $n({y})] queue]")
            red = 1 if (core_export(q) or {}).get("early_drops") else 0
            if j in dsq:
                red = 1  # dsRED queues have an early-drop target too
                out.extend(dsq[j].tcl)
                cps = " ".join(str(c) for c in sorted(dsq[j].cp_vq))
                vqs = " ".join(sorted({f"{{{qi} {p}}}" for qi, p in dsq[j].cp_vq.values()}))
                out += [
                    f"set qoslab_dsq({j}) $q",
                    f"set qoslab_dscps({j}) {{{cps}}}",
                    f"set qoslab_dsvq({j}) {{{vqs}}}",
                ]
            else:
                out.extend(f"$q set {k} {v}" for k, v in _queue_settings(q))
            out.append(f"set qoslab_qm({j}) [qoslab_monitor [$ns link $n({x}) $n({y})] {red}]")
            out.append(f"set qoslab_red({j}) {red}")
            out.append(f"set qoslab_lname({j}) {lname}")
            out.append(f"set qoslab_ldir({j}) {direction}")
            j += 1
    out.append(f"set qoslab_nlinks {j}")

    out.append("# ---- flows ----")
    for i, f in enumerate(resolved["flows"]):
        out.extend(_flow_tcl(i, f, node_idx, duration))
        if plan is not None:  # codepoints set by the hosts (ns-2 hdr_ip prio_)
            out.append(f"$src set prio_ {plan.flow_cp[i]}")
            if f["kind"] == "tcp":
                out.append(f"$dst set prio_ {plan.ack_cp}")
    out.append(f"set qoslab_nflows {len(resolved['flows'])}")

    out.append("# ---- measurement schedule ----")
    period = _poll_interval(resolved)
    if period is not None:
        k = 1
        while k * period < duration:
            out.append(f'$ns at {tcl_number(k * period)} "qoslab_poll"')
            k += 1
    out.append(f'$ns at {tcl_number(mstart)} "qoslab_mark_start"')
    if mend < duration:
        out.append(f'$ns at {tcl_number(mend)} "qoslab_mark_end"')
    out.append(f'$ns at {tcl_number(duration)} "qoslab_finish"')
    out.append("$ns run")
    return "\n".join(out) + "\n", plan


def _queue_class(q: dict[str, Any], dq: DsQueue | None) -> str:
    """The ns-2 queue class of one link direction."""
    if dq is not None:
        return "dsRED/edge" if dq.edge else "dsRED/core"
    exp = core_export(q)
    assert exp is not None, "checked by unsupported_reason"
    return str(exp["class"])


def _app_tcl(f: dict[str, Any], rate: float, size: int) -> list[str]:
    """The lines creating a UDP flow's ns-2 application, as its source kind declares it (the
    schema's ``x-ns2-app``); a braced value is computed here for the flow."""
    app = schema.source_kinds()[f["kind"]]["x-ns2-app"]
    peak = rate * POISSON_RATE_FACTOR
    values: dict[str, Callable[[], float]] = {
        "rate_bps": lambda: rate,
        "on_s": lambda: float(f["on_s"]),
        "off_s": lambda: float(f["off_s"]),
        "peak_bps": lambda: peak,
        # a Poisson process as an exponential on/off source with no ON time: one packet at
        # the peak rate, then the idle time making the mean gap
        "idle_s": lambda: 8.0 * size / rate - 8.0 * size / peak,
    }
    lines = [f"set app [new {app['class']}]"]
    for name, value in app["settings"]:
        v = tcl_number(values[value[1:-1]]()) if value.startswith("{") else value
        lines.append(f"$app set {name} {v}")
    return lines


def _flow_tcl(i: int, f: dict[str, Any], node_idx: dict[str, int], duration: float) -> list[str]:
    """Return the Tcl lines creating flow ``i`` and scheduling its start/stop."""
    src, dst = node_idx[f["src"]], node_idx[f["dst"]]
    size = int(f["packet_size_bytes"])
    lines = [f"# flow {i}: {tcl_comment(f['name'])} ({f['kind']})"]
    if f["kind"] == "tcp":
        t = f["tcp"]
        agent = tcp_agent(t["variant"])
        assert agent is not None, "checked by flow_reason"
        lines.append(f"set src [new {agent['agent']}]")
        params = dict(TCP_FIXED_PARAMS)
        params.update(dict(agent["settings"]))  # the agent's own (its ns-2.35 defaults, explicit)
        params.update(
            {
                "fid_": str(i),
                "ttl_": str(AGENT_TTL),
                # qoslab sizes are on the wire; ns-2 adds 40 header bytes.
                "packetSize_": str(size - 40),
                "syn_": "true" if t.get("syn", True) else "false",
                "window_": str(t["window_pkts"]),
                "windowInit_": str(t["initial_window_pkts"]),
                "minrto_": tcl_number(t["min_rto_s"]),
                "maxrto_": tcl_number(t["max_rto_s"]),
                "rtxcur_init_": tcl_number(t["initial_rto_s"]),
                "tcpTick_": tcl_number(t["tick_s"]),
                "maxburst_": str(t["max_burst"]),
                # the flow's own tcp.ecn: ECT data, ECN-Echo halves the window (ns-2 ecn_)
                "ecn_": "1" if t.get("ecn") else "0",
            }
        )
        lines.extend(f"$src set {k} {v}" for k, v in params.items())
        sink = agent["sink"]
        if t["delayed_ack"]:
            lines.append(f"set dst [new {sink}/DelAck]")
            lines.append(f"$dst set interval_ {tcl_number(t['delack_interval_s'])}")
        else:
            lines.append(f"set dst [new {sink}]")
        for k, v in (
            ("packetSize_", str(t["ack_size_bytes"])),
            ("ttl_", str(AGENT_TTL)),
            ("fid_", str(i)),
            ("ts_echo_bugfix_", "true"),
            ("ts_echo_rfc1323_", "false"),
            ("generateDSacks_", "false"),
            ("RFC2581_immediate_ack_", "true"),
            ("SYN_immediate_ack_", "true"),
            ("qs_enabled_", "false"),
            ("ecn_syn_", "false"),
        ):
            lines.append(f"$dst set {k} {v}")
        lines += [
            f"$ns attach-agent $n({src}) $src",
            f"$ns attach-agent $n({dst}) $dst",
            "$ns connect $src $dst",
            "set app [new Application/FTP]",
            "$app attach-agent $src",
            f"set qoslab_tx({i}) $src",
        ]
        segments = finite_segments(f)
        if segments is not None:
            lines += [
                f"set qoslab_finite_of($src) {i}",
                f"set qoslab_size({i}) {int(f['size_bytes'])}",
                f"set qoslab_nseg({i}) {segments}",
                f"set qoslab_start({i}) {tcl_number(float(f['start_s']))}",
            ]
    else:
        rate = float(f["rate_bps"])
        lines += [
            "set src [new Agent/UDP]",
            f"$src set packetSize_ {size}",
            f"$src set fid_ {i}",
            f"$src set ttl_ {AGENT_TTL}",
            "set dst [new Agent/LossMonitor]",
            f"$dst set ttl_ {AGENT_TTL}",
            f"$ns attach-agent $n({src}) $src",
            f"$ns attach-agent $n({dst}) $dst",
            "$ns connect $src $dst",
            f"set qoslab_tx({i}) [qoslab_tx_counter $src]",
        ]
        lines += _app_tcl(f, rate, size)
        lines += [f"$app set packetSize_ {size}", "$app attach-agent $src"]
    lines += [
        f"set qoslab_kind({i}) {'tcp' if f['kind'] == 'tcp' else 'udp'}",
        f"set qoslab_rx({i}) $dst",
        f"set qoslab_psize({i}) {size}",
        f"set qoslab_fname({i}) {tcl_quote(json.dumps(f['name']))}",
        f"set qoslab_rx_last({i}) 0",
        f"set qoslab_rx_total({i}) 0",
        f"set qoslab_win_start({i}) 0",
        f"set qoslab_win_end({i}) 0",
    ]
    start = float(f["start_s"])
    if start < duration:
        segments = finite_segments(f)
        if segments is not None:
            # A finite transfer: FTP `produce n` is `advance n` (ns-source.tcl), which sets the
            # application limit curseq_ to n (tcp.cc TcpAgent::command); with syn_, sending the
            # SYN adds one (TcpAgent::output), so segments 0..n go out: the SYN and n data
            # segments (without syn_, segments 0..n-1). qoslab's curseq is the same n + 1 (n).
            lines.append(f'$ns at {tcl_number(start)} "$app produce {segments}"')
        else:
            lines.append(f'$ns at {tcl_number(start)} "$app start"')
    stop = f.get("stop_s")
    if stop is not None and float(stop) < duration:
        lines.append(f'$ns at {tcl_number(float(stop))} "$app stop"')
    return lines
