//! The dumbbell the end-to-end tests share: `n` senders `s{i}` → r1 → bottleneck → r2 →
//! receivers `d{i}`, 1 ms access links at 1 Gbit/s.

/// A dumbbell scenario's text.
pub struct Dumbbell<'a> {
    pub n: usize,
    /// Keys appended inside the scenario's `tcp` table, each with a leading comma.
    pub tcp: &'a str,
    pub packet_size: &'a str,
    pub bandwidth: &'a str,
    pub delay: &'a str,
    /// The bottleneck's a→b queue table.
    pub queue: &'a str,
    /// The access links' queue table (`""`: the default).
    pub access_queue: &'a str,
    pub duration: &'a str,
    /// The senders' start: a duration or `uniform(a, b)`.
    pub start: &'a str,
    pub measure_from: &'a str,
    /// Appended TOML (more flows).
    pub extra: &'a str,
}

impl Dumbbell<'_> {
    pub fn toml(&self) -> String {
        let access = if self.access_queue.is_empty() {
            String::new()
        } else {
            format!("queue = {}\n", self.access_queue)
        };
        format!(
            r#"
name = "dumbbell"
duration = "{dur}"
tcp = {{ packet_size = "{ps}", window = 100000 {tcp} }}
[[node]]
name = "s{{i}}"
count = {n}
[[node]]
name = "r1"
[[node]]
name = "r2"
[[node]]
name = "d{{i}}"
count = {n}
[[link]]
count = {n}
a = "s{{i}}"
b = "r1"
bandwidth = "1Gbps"
delay = "1ms"
{access}[[link]]
name = "bottleneck"
a = "r1"
b = "r2"
bandwidth = "{bw}"
delay = "{delay}"
queue_ab = {queue}
[[link]]
count = {n}
a = "r2"
b = "d{{i}}"
bandwidth = "1Gbps"
delay = "1ms"
{access}[[flow]]
count = {n}
src = "s{{i}}"
dst = "d{{i}}"
start = "{start}"
{extra}
[measurement]
bottleneck = "bottleneck"
start = "{from}"
"#,
            dur = self.duration,
            ps = self.packet_size,
            tcp = self.tcp,
            n = self.n,
            bw = self.bandwidth,
            delay = self.delay,
            queue = self.queue,
            start = self.start,
            extra = self.extra,
            from = self.measure_from,
        )
    }
}
