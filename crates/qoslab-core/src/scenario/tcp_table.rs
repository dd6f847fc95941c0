//! A TCP sender's settings: the `[tcp]` table (defaults for every TCP sender) and a flow's or
//! arrival process's own `tcp` table over it, read per flavour (the ns2 flavour's ns-2.35
//! defaults, the linux flavour's Linux's), their congestion-control constants and their
//! packet sizes checked at the key that sets them.

use super::keys::{tcp, TCP};
use super::spec::*;
use super::{bad, Bad};
use crate::packet::{MAX_PACKET_BYTES, TCP_IP_HEADER_BYTES};
use crate::params::Table;
use crate::traffic::cc::{CcParams, Recovery};
use crate::traffic::linux::cc::LinuxCcParams;
use crate::traffic::linux::config::FlavourDefaults;
use crate::traffic::tcp::{explicit as ex, Flavour, TcpConfig};

/// ns-2.35's defaults for Agent/TCP and TCPSink (except where noted in docs/models/tcp.md),
/// as [`tcp`]'s declarations give them: the ns2 flavour's.
fn tcp_defaults() -> TcpConfig {
    let wire = |d: &crate::params::typed::Decl<crate::params::typed::Bytes>| {
        u32::try_from(d.default_value()).expect("a declared size on the wire fits")
    };
    let mut t = TcpConfig {
        variant: variant_of(tcp::VARIANT.default_value()),
        ack_size_bytes: wire(&tcp::ACK_SIZE),
        window_pkts: 0,
        initial_window_pkts: 0,
        min_rto_ns: 0,
        max_rto_ns: 0,
        initial_rto_ns: 0,
        tick_ns: tcp::TICK.default_value(),
        delayed_ack: false,
        delack_interval_ns: 0,
        max_burst: tcp::MAX_BURST.default_value(),
        dupack_threshold: tcp::DUPACK_THRESHOLD.default_value(),
        ecn: tcp::ECN.default_value(),
        syn: false,
        pacing: tcp::PACING.default_value(),
        sack: false,
        flavour: flavour_of(tcp::FLAVOUR.default_value()),
        explicit: 0,
        cc: None,
        linux_cc: None,
        cc_tables: Default::default(),
    };
    t.apply_defaults(&flavour_defaults(t.flavour));
    t
}

/// The defaults `flavour` gives the keys whose defaults differ between flavours: the ns2
/// flavour's are [`tcp`]'s declared defaults (ns-2.35's), the linux flavour's Linux's.
fn flavour_defaults(flavour: Flavour) -> FlavourDefaults {
    match flavour {
        Flavour::Ns2 => FlavourDefaults {
            window_pkts: tcp::WINDOW.default_value(),
            initial_window_pkts: tcp::INITIAL_WINDOW.default_value(),
            min_rto_ns: tcp::MIN_RTO.default_value(),
            max_rto_ns: tcp::MAX_RTO.default_value(),
            initial_rto_ns: tcp::INITIAL_RTO.default_value(),
            delayed_ack: tcp::DELAYED_ACK.default_value(),
            delack_interval_ns: tcp::DELACK_INTERVAL.default_value(),
            syn: tcp::SYN.default_value(),
            sack: tcp::SACK.default_value(),
        },
        Flavour::Linux => FlavourDefaults::linux(),
    }
}

fn variant_of(name: &str) -> TcpVariant {
    TcpVariant::from_name(name).expect("a declared variant name")
}

fn flavour_of(name: &str) -> Flavour {
    match name {
        "linux" => Flavour::Linux,
        _ => Flavour::Ns2,
    }
}

/// The table `s` (`[tcp]`, or a flow's `tcp` at `key`) over `base`; its `packet_size` is
/// checked here, at its own key, and returned in `packet_size`.
fn apply_tcp(
    key: &str,
    base: &mut TcpConfig,
    s: &toml::Table,
    packet_size: &mut Option<u64>,
) -> Result<(), Bad> {
    use tcp::*;
    let t = Table::section(s, key, TCP)?;
    if let Some(v) = t.opt(&FLAVOUR)? {
        base.flavour = flavour_of(v);
    }
    if let Some(v) = t.opt(&VARIANT)? {
        base.variant = variant_of(v);
    }
    for (name, bit) in [
        (WINDOW.name(), ex::WINDOW),
        (INITIAL_WINDOW.name(), ex::INITIAL_WINDOW),
        (MIN_RTO.name(), ex::MIN_RTO),
        (MAX_RTO.name(), ex::MAX_RTO),
        (INITIAL_RTO.name(), ex::INITIAL_RTO),
        (DELAYED_ACK.name(), ex::DELAYED_ACK),
        (DELACK_INTERVAL.name(), ex::DELACK_INTERVAL),
        (SYN.name(), ex::SYN),
        (SACK.name(), ex::SACK),
        (TICK.name(), ex::TICK),
        (MAX_BURST.name(), ex::MAX_BURST),
    ] {
        if t.has(name) {
            base.explicit |= bit;
        }
    }
    if let Some(v) = t.opt(&PACKET_SIZE)? {
        // checked where it is written (`[tcp]`'s applies to every TCP flow that has none)
        let size = check_packet_size(key, v)?;
        check_segment_size(key, size)?;
        *packet_size = Some(v);
    }
    if let Some(v) = t.opt(&ACK_SIZE)? {
        // An ACK is a packet on the wire like any other, checked before it is narrowed (a 5 GB
        // ACK wrapped to 705 MB and stalled the flow without a word).
        base.ack_size_bytes = check_wire_size(&t.key(ACK_SIZE.name()), "ACK", v)?;
    }
    let set = |field: &mut u32, v: Option<u32>| *field = v.unwrap_or(*field);
    set(&mut base.window_pkts, t.opt(&WINDOW)?);
    set(&mut base.initial_window_pkts, t.opt(&INITIAL_WINDOW)?);
    set(&mut base.max_burst, t.opt(&MAX_BURST)?);
    set(&mut base.dupack_threshold, t.opt(&DUPACK_THRESHOLD)?);
    let set = |field: &mut u64, v: Option<u64>| *field = v.unwrap_or(*field);
    set(&mut base.min_rto_ns, t.opt(&MIN_RTO)?);
    set(&mut base.max_rto_ns, t.opt(&MAX_RTO)?);
    set(&mut base.initial_rto_ns, t.opt(&INITIAL_RTO)?);
    set(&mut base.tick_ns, t.opt(&TICK)?);
    set(&mut base.delack_interval_ns, t.opt(&DELACK_INTERVAL)?);
    let (ecn, syn, pacing, sack) = (t.opt(&ECN)?, t.opt(&SYN)?, t.opt(&PACING)?, t.opt(&SACK)?);
    let set = |field: &mut bool, v: Option<bool>| *field = v.unwrap_or(*field);
    set(&mut base.delayed_ack, t.opt(&DELAYED_ACK)?);
    set(&mut base.ecn, ecn);
    set(&mut base.syn, syn);
    set(&mut base.pacing, pacing);
    set(&mut base.sack, sack);
    // Every key no table has set takes the defaults of the flavour resolved so far (the flow's,
    // once its own table is read), never those of a flavour a table below named.
    base.apply_defaults(&flavour_defaults(base.flavour));
    // DCTCP implies ECN and BBR pacing unless this table says otherwise (then `validate_tcp`
    // refuses it); variant sack implies `sack`, which a flow of another variant then inherits
    // as if the table had set it.
    if base.variant.requires_ecn() && ecn != Some(false) {
        base.ecn = true;
    }
    if base.variant.always_paces() && pacing != Some(false) {
        base.pacing = true;
    }
    if base.variant.recovery() == Recovery::Sack && sack != Some(false) {
        base.sack = true;
        base.explicit |= ex::SACK;
    }
    if let Some(cc) = t.table(CC.name)? {
        read_constants(key, base, cc)?;
    }
    let merged = base.cc_tables.get(base.variant.name()).cloned();
    let ckey = format!("{key}.cc.{}", base.variant.name());
    let table = merged.unwrap_or_default();
    // Inherited keys too must be the flow's flavour's (an ns2 `[tcp]` under a linux flow).
    check_cc_keys(&ckey, base.flavour, base.variant, &table)?;
    let (cc, linux_cc) = read_cc(base.flavour, base.variant, &Table::host(&table, &ckey))?;
    (base.cc, base.linux_cc) = (cc, linux_cc);
    if base.flavour == Flavour::Linux {
        check_linux(key, base, (syn, sack))?;
    }
    Ok(())
}

type FlavourCc = (Option<CcParams>, Option<LinuxCcParams>);

/// `variant`'s constants under `flavour` from a checked `tcp.cc.VARIANT` table (`None`: the
/// declared defaults).
fn read_cc(flavour: Flavour, variant: TcpVariant, t: &Table) -> Result<FlavourCc, Bad> {
    Ok(match flavour {
        Flavour::Ns2 => {
            let p = CcParams::read(variant, t)?;
            ((!p.is_default()).then_some(p), None)
        }
        Flavour::Linux => (None, LinuxCcParams::read(variant, t)?),
    })
}

/// Every key of `t` (at `vkey`) is one `flavour`'s sender takes for `variant`.
fn check_cc_keys(
    vkey: &str,
    flavour: Flavour,
    variant: TcpVariant,
    t: &toml::Table,
) -> Result<(), Bad> {
    let keys = flavour.cc_keys(variant);
    match t
        .keys()
        .find(|k| !keys.iter().any(|p| p.name == k.as_str()))
    {
        Some(k) => Err(bad(
            format!("{vkey}.{k}"),
            format!(
                "`{k}` is not a key of {} under the {} flavour (it takes {})",
                variant.name(),
                flavour.name(),
                keys.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
            ),
        )),
        None => Ok(()),
    }
}

/// The `cc` table at `key.cc`: a table of constants per variant, each checked against the
/// keys the flow's flavour takes for that variant and their ranges, merged over `base`'s (key
/// by key).
fn read_constants(key: &str, base: &mut TcpConfig, cc: &toml::Table) -> Result<(), Bad> {
    let flavour = base.flavour;
    for (name, v) in cc {
        let vkey = format!("{key}.cc.{name}");
        let tunable: Vec<&str> = crate::traffic::cc::VARIANT_NAMES
            .iter()
            .copied()
            .filter(|n| TcpVariant::from_name(n).is_some_and(|v| !flavour.cc_keys(v).is_empty()))
            .collect();
        let Some(variant) = TcpVariant::from_name(name).filter(|v| !flavour.cc_keys(*v).is_empty())
        else {
            return Err(bad(
                vkey,
                format!(
                    "`{name}` is not a TCP variant with constants under the {} flavour (those \
                     are {})",
                    flavour.name(),
                    tunable.join(", ")
                ),
            ));
        };
        let toml::Value::Table(t) = v else {
            return Err(bad(vkey, format!("expected a table of {name}'s constants")));
        };
        check_cc_keys(&vkey, flavour, variant, t)?;
        read_cc(flavour, variant, &Table::host(t, &vkey))?;
        let merged = base.cc_tables.entry(name.clone()).or_default();
        for (k, x) in t {
            merged.insert(k.clone(), x.clone());
        }
    }
    Ok(())
}

/// What the linux flavour cannot honour, under `key` (checked on the table that sets it, so
/// an inherited ns-2 default never trips it).
/// `given`: the table's own `syn` and `sack`.
fn check_linux(key: &str, t: &TcpConfig, given: (Option<bool>, Option<bool>)) -> Result<(), Bad> {
    let refuse = |k: &str, why: &str| Err(bad(format!("{key}.{k}"), why.to_string()));
    if t.variant == crate::traffic::cc::TcpVariant::Newreno {
        return refuse(
            "variant",
            "the linux flavour has no newreno module: use reno, sack (both Linux's reno), \
             cubic, dctcp or bbr",
        );
    }
    if given.0 == Some(true) || (t.explicit & ex::SYN != 0 && t.syn) {
        return refuse(
            "syn",
            "the linux flavour models no handshake: `syn` cannot be true",
        );
    }
    if given.1 == Some(false) || (t.explicit & ex::SACK != 0 && !t.sack) {
        return refuse(
            "sack",
            "the linux flavour always uses SACK: `sack` cannot be false",
        );
    }
    if t.explicit & ex::TICK != 0 {
        return refuse(
            "tick",
            "the linux flavour's RTT estimator works in microseconds as Linux's: `tick` \
             applies to the ns2 flavour only",
        );
    }
    if t.max_burst != 0 {
        return refuse(
            "max_burst",
            "Linux has no max_burst: it must be 0 with the linux flavour",
        );
    }
    Ok(())
}

fn validate_tcp(key: &str, t: &TcpConfig) -> Result<(), Bad> {
    // window, initial_window, tick and dupack_threshold are checked against their declared
    // limits when read ([`tcp`]); what is left are the rules between keys.
    if t.min_rto_ns > t.max_rto_ns {
        return Err(bad(
            format!("{key}.min_rto"),
            "min_rto must not exceed max_rto",
        ));
    }
    if t.variant.requires_ecn() && !t.ecn {
        return Err(bad(
            format!("{key}.ecn"),
            format!(
                "variant {} requires ECN: `ecn` cannot be false",
                t.variant.name()
            ),
        ));
    }
    if t.sack != t.uses_sack() {
        return Err(bad(
            format!("{key}.sack"),
            "variant sack is SACK recovery: `sack` cannot be false",
        ));
    }
    if t.sack && t.variant.is_ns2_agent() && t.flavour.is_ns2() {
        return Err(bad(
            format!("{key}.sack"),
            format!(
                "variant {} is ns-2's non-SACK agent; for Reno with SACK recovery use variant \
                 = \"sack\"",
                t.variant.name()
            ),
        ));
    }
    if t.variant.always_paces() && !t.pacing {
        return Err(bad(
            format!("{key}.pacing"),
            format!(
                "variant {} always paces: `pacing` cannot be false",
                t.variant.name()
            ),
        ));
    }
    Ok(())
}

/// The `[tcp]` defaults (ns-2's, overridden by the section) and its packet size. A default no
/// sender reads is accepted (`[tcp]` with no TCP flow, a `cc` table for a variant none runs, a
/// `delack_interval` where no receiver delays its ACKs): an override that switches the flows'
/// type, variant, flavour or `delayed_ack` keeps one file.
pub(super) fn tcp_base(spec: &ScenarioSpec) -> Result<(TcpConfig, Option<u64>), Bad> {
    let mut tcp_base = tcp_defaults();
    let mut base_pkt: Option<u64> = None;
    apply_tcp("tcp", &mut tcp_base, &spec.tcp, &mut base_pkt)?;
    validate_tcp("tcp", &tcp_base)?;
    Ok((tcp_base, base_pkt))
}

/// A flow's own TCP settings over the defaults, validated under `key`.
pub(super) fn tcp_for(
    key: &str,
    base: &TcpConfig,
    own: Option<&toml::Table>,
    pkt: &mut Option<u64>,
) -> Result<TcpConfig, Bad> {
    let mut tcp = base.clone();
    if let Some(t) = own {
        let key = format!("{key}.tcp");
        apply_tcp(&key, &mut tcp, t, pkt)?;
        validate_tcp(&key, &tcp)?;
    }
    Ok(tcp)
}

/// A data packet size in bytes, checked to be 1..=[`MAX_PACKET_BYTES`].
pub(super) fn check_packet_size(key: &str, bytes: u64) -> Result<u32, Bad> {
    check_wire_size(&format!("{key}.packet_size"), "packet", bytes)
}

/// A TCP segment's size on the wire: above its 40-byte TCP/IP header (a smaller one carried no
/// payload and was counted as one byte).
pub(super) fn check_segment_size(key: &str, bytes: u32) -> Result<(), Bad> {
    if bytes <= TCP_IP_HEADER_BYTES {
        return Err(bad(
            format!("{key}.packet_size"),
            format!(
                "a TCP segment's packet size (the flow's own, or [tcp]'s) includes its \
                 {TCP_IP_HEADER_BYTES}-byte TCP/IP header: at least {} bytes, got {bytes}",
                TCP_IP_HEADER_BYTES + 1
            ),
        ));
    }
    Ok(())
}

/// The size of a packet on the wire at `key` (`what`: "packet", "ACK"), checked to be
/// 1..=[`MAX_PACKET_BYTES`] (a link's line keeps sizes in 16 bits).
fn check_wire_size(key: &str, what: &str, bytes: u64) -> Result<u32, Bad> {
    if bytes == 0 || bytes > u64::from(MAX_PACKET_BYTES) {
        return Err(bad(
            key,
            format!("{what} size must be 1..{MAX_PACKET_BYTES} bytes, got {bytes}"),
        ));
    }
    Ok(bytes as u32)
}
