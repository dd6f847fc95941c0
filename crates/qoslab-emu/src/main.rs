//! `qoslab-linkd`: the emulation mode's link daemon.
//!
//! * `qoslab-linkd plan SCENARIO.toml SEED` prints each flow's route (link directions) and
//!   start time as JSON, so that the namespaces are wired exactly as the simulator routes.
//! * `qoslab-linkd run CONFIG.json` binds the NFQUEUE numbers of the link directions that end
//!   in this network namespace and runs them ([`qoslab_emu::emulator::Emulator`]) until
//!   SIGTERM/SIGINT or `max_seconds`; then it accepts whatever it still holds and writes its
//!   counters (the simulator's tables) to `out`.
//!
//! Timing: the daemon polls the queue without blocking and sleeps until the next packet is
//! due, at most `poll_us`; run it with real-time priority (`chrt -f 50`) for sub-millisecond
//! release accuracy. Every release's lateness (verdict time − model time) is recorded.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nfq::{Message, Queue, Verdict};
use qoslab_core::packet::PacketId;
use qoslab_core::Scenario;
use qoslab_emu::emulator::{Admission, DirSpec, Emulator, FlowPort};
use qoslab_emu::ipv4;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize)]
struct DirCfg {
    dir_idx: usize,
    queue_num: u16,
    #[serde(default)]
    delay_only: bool,
}

#[derive(Deserialize)]
struct PortCfg {
    protocol: u8,
    port: u16,
    #[serde(default)]
    mss: u32,
}

#[derive(Deserialize)]
struct Config {
    node: String,
    scenario: PathBuf,
    seed: u64,
    dirs: Vec<DirCfg>,
    ports: Vec<PortCfg>,
    out: PathBuf,
    ready: PathBuf,
    max_seconds: f64,
    #[serde(default = "default_poll")]
    poll_us: u64,
    /// Time zero of the run's traffic (Unix seconds) and the width of the delivery bins: data
    /// packets released to their destination node are counted per flow and bin, as the
    /// simulator counts throughput where packets reach the receiver.
    #[serde(default)]
    epoch_unix_s: f64,
    #[serde(default = "default_bin")]
    bin_s: f64,
    #[serde(default)]
    bins: usize,
}

fn default_bin() -> f64 {
    0.1
}

fn default_poll() -> u64 {
    100
}

/// Release lateness in 10 µs bins up to 50 ms (the last bin collects the rest).
struct Lateness {
    bins: Vec<u64>,
    sum_ns: u128,
    max_ns: u64,
    n: u64,
}

impl Lateness {
    const BIN_NS: u64 = 10_000;
    fn new() -> Self {
        Lateness {
            bins: vec![0; 5001],
            sum_ns: 0,
            max_ns: 0,
            n: 0,
        }
    }
    fn add(&mut self, ns: u64) {
        let b = ((ns / Self::BIN_NS) as usize).min(self.bins.len() - 1);
        self.bins[b] += 1;
        self.sum_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
        self.n += 1;
    }
    fn quantile_us(&self, q: f64) -> f64 {
        let target = (q * self.n as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (i, &c) in self.bins.iter().enumerate() {
            acc += c;
            if acc >= target {
                return ((i as u64 + 1) * Self::BIN_NS) as f64 / 1e3;
            }
        }
        f64::NAN
    }
}

fn fail(msg: String) -> ! {
    eprintln!("qoslab-linkd: {msg}");
    std::process::exit(1);
}

fn load_scenario(path: &PathBuf) -> Scenario {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| fail(format!("cannot read {}: {e}", path.display())));
    let sc = Scenario::from_toml(&text, &path.display().to_string())
        .unwrap_or_else(|e| fail(e.to_string()));
    // the daemon releases packets on the host's own clock, whose noise is the jitter here
    // (`qoslab emulate` refuses the key too: emulation/capability.py)
    if let Some(l) = sc.links.iter().find(|l| l.jitter_ns > 0) {
        fail(format!(
            "{}: link {:?}: `jitter` is not emulated (the host's own timing is the noise); set it to 0",
            path.display(),
            l.name
        ));
    }
    sc
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match (args.get(1).map(String::as_str), args.len()) {
        (Some("plan"), 4) => {
            let sc = load_scenario(&PathBuf::from(&args[2]));
            let seed: u64 = args[3]
                .parse()
                .unwrap_or_else(|_| fail(format!("seed must be an integer, got {:?}", args[3])));
            let p = qoslab_emu::plan::plan(&sc, seed);
            println!("{}", serde_json::to_string(&p).expect("plan serialises"));
        }
        (Some("run"), 3) => {
            let text = std::fs::read_to_string(&args[2])
                .unwrap_or_else(|e| fail(format!("cannot read {}: {e}", args[2])));
            let cfg: Config = serde_json::from_str(&text)
                .unwrap_or_else(|e| fail(format!("{}: bad config: {e}", args[2])));
            if let Err(e) = run(cfg) {
                fail(e.to_string());
            }
        }
        _ => {
            eprintln!("usage: qoslab-linkd plan SCENARIO.toml SEED | qoslab-linkd run CONFIG.json");
            std::process::exit(2);
        }
    }
}

/// The emulator of the configured link directions and flows, and the slot of each NFQUEUE number.
fn emulator(cfg: &Config, sc: &Scenario) -> (Emulator, HashMap<u16, usize>) {
    let dirs: Vec<DirSpec> = cfg
        .dirs
        .iter()
        .map(|d| DirSpec {
            dir_idx: d.dir_idx,
            delay_only: d.delay_only,
        })
        .collect();
    for d in &dirs {
        if d.dir_idx >= sc.links.len() * 2 {
            fail(format!("direction {} is not in the scenario", d.dir_idx));
        }
    }
    let ports: Vec<FlowPort> = cfg
        .ports
        .iter()
        .map(|p| FlowPort {
            protocol: p.protocol,
            port: p.port,
            mss: p.mss,
        })
        .collect();
    let emu = Emulator::new(sc, cfg.seed, &dirs, &ports);
    let slot_of: HashMap<u16, usize> = cfg
        .dirs
        .iter()
        .map(|d| (d.queue_num, emu.slot(d.dir_idx).expect("configured")))
        .collect();
    (emu, slot_of)
}

/// The NFQUEUE handle bound to the configured queue numbers, polled without blocking.
fn open_queue(cfg: &Config) -> std::io::Result<Queue> {
    let mut q = Queue::open()?;
    for d in &cfg.dirs {
        q.bind(d.queue_num)?;
        q.set_queue_max_len(d.queue_num, 16_384)?;
        q.set_fail_open(d.queue_num, false)?;
    }
    q.set_nonblocking(true);
    Ok(q)
}

fn run(cfg: Config) -> std::io::Result<()> {
    let sc = load_scenario(&cfg.scenario);
    let (mut emu, slot_of) = emulator(&cfg, &sc);
    let mut q = open_queue(&cfg)?;
    let stop = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::clone(&stop))?;
    signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&stop))?;

    let t0 = Instant::now();
    let t0_unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let now = || t0.elapsed().as_nanos() as u64;
    let here = sc.node_index(&cfg.node);
    let mut delivered = vec![vec![0u64; cfg.bins]; sc.flows.len()];
    // Each flow's data drops in the same bins, taken from the emulator every loop.
    let mut dropped = vec![vec![0u64; cfg.bins]; sc.flows.len()];
    let mut drops = Vec::new();
    let bin_of = |t: u64| -> Option<usize> {
        let x = (t0_unix + t as f64 / 1e9 - cfg.epoch_unix_s) / cfg.bin_s;
        (x >= 0.0 && (x as usize) < cfg.bins).then_some(x as usize)
    };
    std::fs::write(&cfg.ready, format!("{}\n", std::process::id()))?;
    let max_ns = (cfg.max_seconds * 1e9) as u64;
    let poll_ns = cfg.poll_us * 1000;
    let mut held: Vec<Option<Message>> = Vec::with_capacity(4096);
    let mut due = Vec::with_capacity(256);
    let mut gone = Vec::new();
    let mut late = Lateness::new();
    let (mut unparsed, mut verdicts, mut rewritten) = (0u64, 0u64, 0u64);
    let mut stopped_by = "signal";
    while !stop.load(Ordering::Relaxed) {
        if now() > max_ns {
            stopped_by = "max_seconds";
            break;
        }
        loop {
            let mut msg = match q.recv() {
                Ok(m) => m,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let t = now();
            let s = slot_of[&msg.get_queue_num()];
            let adm = match ipv4::parse(msg.get_payload()) {
                Some(h) => emu.arrive(t, s, &h),
                None => {
                    unparsed += 1;
                    Admission::Unclassified
                }
            };
            match adm {
                Admission::Held(id) => {
                    if held.len() <= id {
                        held.resize_with(id + 1, || None);
                    }
                    held[id] = Some(msg);
                }
                Admission::Dropped(_) => {
                    msg.set_verdict(Verdict::Drop);
                    q.verdict(msg)?;
                    verdicts += 1;
                }
                Admission::Unclassified => {
                    msg.set_verdict(Verdict::Accept);
                    q.verdict(msg)?;
                    verdicts += 1;
                }
            }
            verdicts += drop_held(&mut emu, &mut held, &mut gone, &mut q)?;
        }
        let t = now();
        emu.due(t, &mut due);
        verdicts += drop_held(&mut emu, &mut held, &mut gone, &mut q)?;
        for (id, when) in due.drain(..) {
            let meta = emu.release(id);
            let f = meta.flow as usize;
            if meta.kind == qoslab_core::packet::PacketKind::Data
                && Some(sc.flows[f].dst_idx) == here
            {
                if let Some(b) = bin_of(when) {
                    delivered[f][b] += meta.size as u64;
                }
            }
            let mut msg = held[id].take().expect("a held packet");
            let tos = (meta.dscp << 2) | meta.ecn;
            if msg.get_payload().get(1) != Some(&tos)
                && ipv4::set_ds_field(msg.get_payload_mut(), meta.dscp, meta.ecn)
            {
                rewritten += 1;
            }
            msg.set_verdict(Verdict::Accept);
            q.verdict(msg)?;
            verdicts += 1;
            late.add(now().saturating_sub(when));
        }
        emu.take_data_drops(&mut drops);
        for (f, when) in drops.drain(..) {
            if let Some(b) = bin_of(when) {
                dropped[f as usize][b] += 1;
            }
        }
        let t = now();
        let wait = emu
            .next_due()
            .map_or(poll_ns, |n| n.saturating_sub(t).min(poll_ns));
        if wait > 0 {
            std::thread::sleep(Duration::from_nanos(wait));
        }
    }
    // Never leave a packet stuck in the kernel: accept what is still held.
    let still_held = held.iter().filter(|m| m.is_some()).count();
    for m in held.iter_mut() {
        if let Some(mut msg) = m.take() {
            msg.set_verdict(Verdict::Accept);
            q.verdict(msg)?;
        }
    }
    write_counters(
        &cfg,
        &sc,
        &emu,
        &late,
        (&delivered, &dropped),
        json!({
            "unparsed": unparsed,
            "verdicts": verdicts,
            "rewritten": rewritten,
            "held_at_end": still_held,
            "stopped_by": stopped_by,
            "run_seconds": now() as f64 / 1e9,
        }),
    )
}

/// Drops the messages of the held packets the queues dropped since the last call (before a new
/// arrival can reuse their ids); returns how many verdicts that gave.
fn drop_held(
    emu: &mut Emulator,
    held: &mut [Option<Message>],
    gone: &mut Vec<PacketId>,
    q: &mut Queue,
) -> std::io::Result<u64> {
    emu.take_dropped_held(gone);
    let mut n = 0;
    for id in gone.drain(..) {
        // every id here was held (the emulator hands over only packets it admitted); a missing
        // message is skipped rather than taking the daemon down
        if let Some(mut msg) = held.get_mut(id).and_then(Option::take) {
            msg.set_verdict(Verdict::Drop);
            q.verdict(msg)?;
            n += 1;
        }
    }
    Ok(n)
}

fn write_counters(
    cfg: &Config,
    sc: &Scenario,
    emu: &Emulator,
    late: &Lateness,
    (delivered, dropped): (&[Vec<u64>], &[Vec<u64>]),
    misc: serde_json::Value,
) -> std::io::Result<()> {
    let dirs: Vec<_> = emu
        .dir_stats()
        .map(|(d, st, held, propagating)| {
            json!({
                "link": d / 2,
                "link_name": sc.links[d / 2].name,
                "direction": if d % 2 == 0 { "ab" } else { "ba" },
                "direction_index": d,
                "arrivals": st.arrivals,
                "departures": st.departures,
                "departed_bytes": st.departed_bytes,
                "early_drops": st.drops[0],
                "forced_drops": st.drops[1],
                "overflow_drops": st.drops[2],
                "policed_drops": st.drops[3],
                "marks": st.marks,
                "arrivals_prec0": st.arrivals_by_prec[0],
                "arrivals_prec1": st.arrivals_by_prec[1],
                "arrivals_prec2": st.arrivals_by_prec[2],
                "drops_prec0": st.drops_by_prec[0],
                "drops_prec1": st.drops_by_prec[1],
                "drops_prec2": st.drops_by_prec[2],
                "queued_at_end": held,
                "propagating_at_end": propagating,
                // The daemon's window is the whole run (start-up included).
                "window_admitted": st.window_admitted,
                "window_wait_ns": st.window_wait_ns,
            })
        })
        .collect();
    let conds: Vec<_> = emu
        .cond_stats()
        .filter(|c| c.1)
        .map(|(i, _, c)| {
            json!({
                "conditioner": i,
                "name": sc.conditioners[i].name,
                "green_packets": c[0],
                "yellow_packets": c[1],
                "red_packets": c[2],
            })
        })
        .collect();
    let flows: Vec<_> = emu
        .flows
        .iter()
        .enumerate()
        .map(|(f, c)| {
            json!({
                "flow": f,
                "arrivals": c.arrivals,
                "colored_green": c.colored[0],
                "colored_yellow": c.colored[1],
                "colored_red": c.colored[2],
                "drops_early": c.drops_by_reason[0],
                "drops_forced": c.drops_by_reason[1],
                "drops_overflow": c.drops_by_reason[2],
                "drops_policed": c.drops_by_reason[3],
                "drops_prec0": c.drops_by_prec[0],
                "drops_prec1": c.drops_by_prec[1],
                "drops_prec2": c.drops_by_prec[2],
                "acks": c.acks,
                "acks_dropped": c.acks_dropped,
                "delivered_bin_bytes": delivered[f],
                "dropped_bin_packets": dropped[f],
            })
        })
        .collect();
    let out = json!({
        "node": cfg.node,
        "links": dirs,
        "conditioners": conds,
        "flows": flows,
        "unclassified": emu.unclassified,
        "misc": misc,
        "lateness": {
            "count": late.n,
            "mean_us": if late.n > 0 { late.sum_ns as f64 / late.n as f64 / 1e3 } else { 0.0 },
            "p50_us": late.quantile_us(0.5),
            "p99_us": late.quantile_us(0.99),
            "max_us": late.max_ns as f64 / 1e3,
        },
    });
    std::fs::write(
        &cfg.out,
        serde_json::to_string_pretty(&out).expect("serialises"),
    )
}
