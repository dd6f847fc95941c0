//! What a TCP sender (a `tcp.variant`) is outside the simulator, declared in its algorithm's
//! file beside the algorithm and named on its registry line: ns-2.35's agent pair, ns-3.37's
//! congestion-control TypeId with its attributes, the Linux kernel module that runs it. The
//! exporters, the emulator and the validation pages read it from the scenario schema
//! (`$defs.sender`, [`SenderExports::schema`]) and name no variant.

use toml::{Table, Value};

/// A sender's outside faces.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SenderExports {
    /// ns-2.35's agents that run it, or `None`: the ns-2 export refuses it.
    pub ns2: Option<Ns2Agent>,
    /// ns-3.37's congestion control, or `None`: the ns-3 export refuses it.
    pub ns3: Option<Ns3Cc>,
    /// The Linux congestion-control module (`net.ipv4.tcp_congestion_control`) that runs it in
    /// the emulator and that the linux flavour models, or `None`: not emulated.
    pub kernel: Option<&'static str>,
}

/// A sender as ns-2.35 runs it: `set src [new AGENT]`, `set dst [new SINK]` (`SINK/DelAck`
/// with delayed ACKs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ns2Agent {
    pub agent: &'static str,
    pub sink: &'static str,
    /// The agent's settings beyond the export's common ones (`$src set NAME VALUE`): ns-2.35's
    /// defaults made explicit.
    pub settings: &'static [(&'static str, &'static str)],
}

/// A sender as ns-3.37 runs it (the program's `TcpL4Protocol::SocketType` for the flow).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ns3Cc {
    /// The congestion control's TypeId.
    pub type_id: &'static str,
    /// The `Config::SetDefault`s of its own attributes, set before the flow's sockets exist.
    pub defaults: &'static [(&'static str, Ns3Value)],
    /// Why it cannot run unpaced, when it cannot (the export refuses `tcp.pacing = false`).
    pub needs_pacing: Option<&'static str>,
    /// The attribute of its random stream, set per flow (else every flow draws alike).
    pub stream: Option<&'static str>,
    /// How ns-3 runs it differently, for the cross-check's notes.
    pub note: Option<&'static str>,
}

/// An ns-3 attribute's value: fixed, or the flow's `tcp` key with its default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ns3Value {
    Text(&'static str),
    /// The flow's `tcp` key, a real number, or the default.
    Number(&'static str, f64),
    /// The flow's `tcp` key, a flag, or the default.
    Flag(&'static str, bool),
}

impl SenderExports {
    /// The schema's `x-exports` of a sender: `ns2` (`{agent, sink, settings}`), `ns3`
    /// (`{type_id, defaults, needs_pacing?, stream?, note?}`; a default is `[name, text]` or `[name,
    /// {key, default}]`) and `kernel` (a module name), each absent when it has none.
    pub fn schema(&self) -> Value {
        let s = |x: &str| Value::String(x.to_string());
        let pair = |a: Value, b: Value| Value::Array(vec![a, b]);
        let mut t = Table::new();
        if let Some(a) = self.ns2 {
            let mut o = Table::new();
            o.insert("agent".into(), s(a.agent));
            o.insert("sink".into(), s(a.sink));
            let settings = a.settings.iter().map(|(k, v)| pair(s(k), s(v)));
            o.insert("settings".into(), Value::Array(settings.collect()));
            t.insert("ns2".into(), Value::Table(o));
        }
        if let Some(c) = self.ns3 {
            let mut o = Table::new();
            o.insert("type_id".into(), s(c.type_id));
            let defaults = c.defaults.iter().map(|(name, v)| {
                let value = match *v {
                    Ns3Value::Text(x) => s(x),
                    Ns3Value::Number(key, d) => {
                        let mut k = Table::new();
                        k.insert("key".into(), s(key));
                        k.insert("default".into(), Value::Float(d));
                        Value::Table(k)
                    }
                    Ns3Value::Flag(key, d) => {
                        let mut k = Table::new();
                        k.insert("key".into(), s(key));
                        k.insert("default".into(), Value::Boolean(d));
                        Value::Table(k)
                    }
                };
                pair(s(name), value)
            });
            o.insert("defaults".into(), Value::Array(defaults.collect()));
            if let Some(why) = c.needs_pacing {
                o.insert("needs_pacing".into(), s(why));
            }
            if let Some(a) = c.stream {
                o.insert("stream".into(), s(a));
            }
            if let Some(n) = c.note {
                o.insert("note".into(), s(n));
            }
            t.insert("ns3".into(), Value::Table(o));
        }
        if let Some(k) = self.kernel {
            t.insert("kernel".into(), s(k));
        }
        Value::Table(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::cc::{Recovery, TcpVariant, VARIANT_NAMES};

    fn variants() -> impl Iterator<Item = (&'static str, TcpVariant)> {
        VARIANT_NAMES
            .iter()
            .map(|n| (*n, TcpVariant::from_name(n).expect("registered")))
    }

    #[test]
    fn the_declared_faces_agree_with_the_variants_algorithm() {
        for (n, v) in variants() {
            let e = v.exports();
            // ns-2.35 has agents for its own variants and Fall & Floyd's SACK sender only,
            // whose receiver is the SACK sink.
            let ns2 = v.is_ns2_agent() || v.recovery() == Recovery::Sack;
            assert_eq!(e.ns2.is_some(), ns2, "{n}");
            if let Some(a) = e.ns2 {
                let sack_sink = a.sink == "Agent/TCPSink/Sack1";
                assert_eq!(sack_sink, v.recovery() == Recovery::Sack, "{n}");
            }
            // a sender that always paces cannot be exported unpaced
            let ns3 = e.ns3.expect("every variant has an ns-3 form");
            assert_eq!(ns3.needs_pacing.is_some(), v.always_paces(), "{n}");
            // the emulator runs a kernel module of the variant's own name, or Linux's reno
            // (NewReno with SACK) for ns-2's Reno family
            if let Some(k) = e.kernel {
                assert!(
                    k == n || (k == "reno" && v.constants().is_empty()),
                    "{n} -> {k}"
                );
            }
        }
    }

    #[test]
    fn ns3_attribute_defaults_are_the_declared_constants() {
        let mut compared = 0;
        for (n, v) in variants() {
            for (_, val) in v.exports().ns3.map_or(&[][..], |c| c.defaults) {
                let Ns3Value::Number(key, d) = *val else {
                    continue;
                };
                if let Some(p) = v.constants().iter().find(|p| p.name == key) {
                    assert_eq!(p.default.parse::<f64>(), Ok(d), "{n}: {key}");
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 3, "CUBIC's c and beta, DCTCP's g");
    }
}
