//! The network: nodes, links (with the queue of each direction) and minimum-hop routes.

use std::collections::{HashMap, VecDeque};

use serde::Serialize;

use super::spec::{LinkSpec, NodeSpec};
use super::{bad, check_len, expand, Bad};
use crate::aqm::QueueConfig;

#[derive(Debug, Clone, Serialize)]
pub struct LinkConfig {
    pub name: String,
    pub a: String,
    pub b: String,
    #[serde(skip)]
    pub a_idx: usize,
    #[serde(skip)]
    pub b_idx: usize,
    pub bandwidth_bps: u64,
    pub delay_ns: u64,
    pub queue_ab: QueueConfig,
    pub queue_ba: QueueConfig,
}

/// The declared nodes, by position and by name.
pub(super) struct Nodes {
    pub names: Vec<String>,
    pub idx: HashMap<String, usize>,
}

impl Nodes {
    /// The index of node `name`; the error at `key` lists the declared nodes.
    pub fn lookup(&self, key: String, name: &str) -> Result<usize, Bad> {
        self.idx.get(name).copied().ok_or_else(|| {
            let mut known: Vec<&str> = self.idx.keys().map(|s| s.as_str()).collect();
            known.sort();
            let shown = if known.len() > 12 {
                format!("{} …", known[..12].join(", "))
            } else {
                known.join(", ")
            };
            bad(
                key,
                format!("unknown node {name:?} (declared nodes: {shown})"),
            )
        })
    }
}

/// The `[[node]]` tables, groups expanded.
pub(super) fn resolve_nodes(specs: &[NodeSpec]) -> Result<Nodes, Bad> {
    let mut nodes = Vec::new();
    let mut node_idx: HashMap<String, usize> = HashMap::new();
    for (n, ns) in specs.iter().enumerate() {
        let count = ns.count.unwrap_or(1) as usize;
        if ns.count == Some(0) {
            return Err(bad(format!("node[{n}].count"), "count must be at least 1"));
        }
        for i in 0..count {
            let name = expand(&ns.name, ns.count, i);
            if name.is_empty() {
                return Err(bad(
                    format!("node[{n}].name"),
                    "node names must not be empty",
                ));
            }
            if node_idx.insert(name.clone(), nodes.len()).is_some() {
                return Err(bad(
                    format!("node[{n}].name"),
                    format!("duplicate node name {name:?} (use \"{{i}}\" in the name of a group)"),
                ));
            }
            nodes.push(name);
        }
    }
    if nodes.is_empty() {
        return Err(bad(
            "node",
            "the scenario declares no nodes ([[node]] tables)",
        ));
    }
    Ok(Nodes {
        names: nodes,
        idx: node_idx,
    })
}

/// The `[[link]]` tables, groups expanded, with the index of each link name.
pub(super) fn resolve_links(
    specs: &[LinkSpec],
    nodes: &Nodes,
) -> Result<(Vec<LinkConfig>, HashMap<String, usize>), Bad> {
    let mut links = Vec::new();
    let mut link_names: HashMap<String, usize> = HashMap::new();
    for (n, ls) in specs.iter().enumerate() {
        let key = format!("link[{n}]");
        if ls.count == Some(0) {
            return Err(bad(format!("{key}.count"), "count must be at least 1"));
        }
        let count = ls.count.unwrap_or(1) as usize;
        check_len(
            format!("{key}.bandwidth"),
            &Some(ls.bandwidth.clone()),
            count,
            ls.count,
        )?;
        check_len(
            format!("{key}.delay"),
            &Some(ls.delay.clone()),
            count,
            ls.count,
        )?;
        let queue = |dir: &Option<toml::Table>, name: &str| match dir.as_ref().or(ls.queue.as_ref())
        {
            Some(t) => {
                let k = if dir.is_some() { name } else { "queue" };
                QueueConfig::from_table(t, &format!("{key}.{k}"))
            }
            None => Ok(QueueConfig::droptail(&format!("{key}.queue"))),
        };
        let queue_ab = queue(&ls.queue_ab, "queue_ab")?;
        let queue_ba = queue(&ls.queue_ba, "queue_ba")?;
        for i in 0..count {
            let a = expand(&ls.a, ls.count, i);
            let b = expand(&ls.b, ls.count, i);
            let a_idx = nodes.lookup(format!("{key}.a"), &a)?;
            let b_idx = nodes.lookup(format!("{key}.b"), &b)?;
            if a_idx == b_idx {
                return Err(bad(
                    format!("{key}.b"),
                    format!("a link must join two different nodes, both ends are {a:?}"),
                ));
            }
            let name = match &ls.name {
                Some(t) => expand(t, ls.count, i),
                None => format!("{a}-{b}"),
            };
            let bandwidth = ls.bandwidth.get(i).0;
            if bandwidth == 0 {
                return Err(bad(
                    format!("{key}.bandwidth"),
                    "the bandwidth must be positive",
                ));
            }
            if link_names.insert(name.clone(), links.len()).is_some() {
                return Err(bad(
                    format!("{key}.name"),
                    format!("duplicate link name {name:?}"),
                ));
            }
            links.push(LinkConfig {
                name,
                a,
                b,
                a_idx,
                b_idx,
                bandwidth_bps: bandwidth,
                delay_ns: ls.delay.get(i).0,
                queue_ab: queue_ab.clone(),
                queue_ba: queue_ba.clone(),
            });
        }
    }
    if links.is_empty() {
        return Err(bad(
            "link",
            "the scenario declares no links ([[link]] tables)",
        ));
    }

    Ok((links, link_names))
}

/// Adjacency lists: for each node, (neighbour, link index, direction a→b?) in link order.
pub type Adjacency = Vec<Vec<(usize, usize, bool)>>;

/// Adjacency lists of the links' graph (see [`Adjacency`]).
pub fn adjacency(n_nodes: usize, links: &[LinkConfig]) -> Adjacency {
    let mut adj = vec![Vec::new(); n_nodes];
    for (i, l) in links.iter().enumerate() {
        adj[l.a_idx].push((l.b_idx, i, true));
        adj[l.b_idx].push((l.a_idx, i, false));
    }
    adj
}

/// Minimum-hop path as a list of link directions (link index * 2 + 0 for a→b, + 1 for b→a).
/// Breadth-first in link declaration order, so ties are broken deterministically.
pub fn shortest_path(
    adj: &[Vec<(usize, usize, bool)>],
    src: usize,
    dst: usize,
) -> Option<Vec<u32>> {
    let mut prev: Vec<Option<(usize, u32)>> = vec![None; adj.len()];
    let mut seen = vec![false; adj.len()];
    let mut q = VecDeque::new();
    seen[src] = true;
    q.push_back(src);
    while let Some(u) = q.pop_front() {
        if u == dst {
            break;
        }
        for &(v, li, ab) in &adj[u] {
            if !seen[v] {
                seen[v] = true;
                prev[v] = Some((u, (li * 2 + usize::from(!ab)) as u32));
                q.push_back(v);
            }
        }
    }
    if !seen[dst] {
        return None;
    }
    let mut path = Vec::new();
    let mut v = dst;
    while v != src {
        let (u, d) = prev[v].expect("BFS predecessor");
        path.push(d);
        v = u;
    }
    path.reverse();
    Some(path)
}
