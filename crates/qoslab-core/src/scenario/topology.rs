//! The network: nodes, links (with the queue of each direction) and minimum-hop routes.

use std::collections::{HashMap, VecDeque};

use serde::Serialize;

use super::keys::{link, node, LINK, NODE};
use super::{bad, check_list, check_name, expand, Bad};
use crate::aqm::QueueConfig;
use crate::params::Table;

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
    /// Each packet's further propagation delay is uniform in `[0, jitter_ns]` (`link.jitter`,
    /// else `[timing] jitter`).
    pub jitter_ns: u64,
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
pub(super) fn resolve_nodes(specs: &[toml::Table]) -> Result<Nodes, Bad> {
    let mut nodes = Vec::new();
    let mut node_idx: HashMap<String, usize> = HashMap::new();
    for (n, table) in specs.iter().enumerate() {
        let key = format!("node[{n}]");
        let t = Table::section(table, &key, NODE)?;
        let template = t.get(&node::NAME)?;
        let count = t.get(&node::COUNT)?;
        let group = t.has(node::COUNT.name()).then_some(count);
        for i in 0..count as usize {
            let name = expand(&template, group, i);
            check_name(format!("node[{n}].name"), "node", &name)?;
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

/// The `[[link]]` tables, groups expanded, with the index of each link name; a link that sets
/// no `jitter` takes `default_jitter` (`[timing] jitter`, ns).
pub(super) fn resolve_links(
    specs: &[toml::Table],
    nodes: &Nodes,
    default_jitter: u64,
) -> Result<(Vec<LinkConfig>, HashMap<String, usize>), Bad> {
    let mut links = Vec::new();
    let mut link_names: HashMap<String, usize> = HashMap::new();
    for (n, table) in specs.iter().enumerate() {
        let key = format!("link[{n}]");
        let t = Table::section(table, &key, LINK)?;
        let (name, a_end, b_end) = (t.opt(&link::NAME)?, t.get(&link::A)?, t.get(&link::B)?);
        let count = t.get(&link::COUNT)?;
        let group = t.has(link::COUNT.name()).then_some(count);
        for d in [
            link::BANDWIDTH.name(),
            link::DELAY.name(),
            link::JITTER.name(),
        ] {
            check_list(&t, d, count as usize, group)?;
        }
        let (q, q_ab, q_ba) = (
            t.table(link::QUEUE.name)?,
            t.table(link::QUEUE_AB.name)?,
            t.table(link::QUEUE_BA.name)?,
        );
        if q.is_some() && q_ab.is_some() && q_ba.is_some() {
            // each direction has its own: `queue` would apply to neither
            return Err(bad(
                format!("{key}.{}", link::QUEUE.name),
                "the link sets queue_ab and queue_ba, so `queue` applies to neither direction: \
                 set the keys in queue_ab and queue_ba",
            ));
        }
        let queue = |dir: Option<&toml::Table>, name: &str| match dir.or(q) {
            Some(qt) => {
                let k = if dir.is_some() { name } else { "queue" };
                QueueConfig::from_table(qt, &format!("{key}.{k}"))
            }
            None => Ok(QueueConfig::droptail(&format!("{key}.queue"))),
        };
        let queue_ab = queue(q_ab, link::QUEUE_AB.name)?;
        let queue_ba = queue(q_ba, link::QUEUE_BA.name)?;
        for i in 0..count as usize {
            let member = t.for_member(i);
            let bandwidth = member.get(&link::BANDWIDTH)?;
            let delay_ns = member.get(&link::DELAY)?;
            let jitter_ns = member.opt(&link::JITTER)?.unwrap_or(default_jitter);
            let a = expand(&a_end, group, i);
            let b = expand(&b_end, group, i);
            let a_idx = nodes.lookup(format!("{key}.a"), &a)?;
            let b_idx = nodes.lookup(format!("{key}.b"), &b)?;
            if a_idx == b_idx {
                return Err(bad(
                    format!("{key}.b"),
                    format!("a link must join two different nodes, both ends are {a:?}"),
                ));
            }
            let name = match &name {
                Some(t) => expand(t, group, i),
                None => format!("{a}-{b}"),
            };
            check_name(format!("{key}.name"), "link", &name)?;
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
                delay_ns,
                jitter_ns,
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

/// Connected component of every node (nodes `u` and `v` are connected iff their labels are
/// equal): one pass over the graph, for validating many flows' endpoints.
pub fn components(adj: &Adjacency) -> Vec<u32> {
    let mut label = vec![u32::MAX; adj.len()];
    let mut stack = Vec::new();
    for s in 0..adj.len() {
        if label[s] != u32::MAX {
            continue;
        }
        label[s] = s as u32;
        stack.push(s);
        while let Some(u) = stack.pop() {
            for &(v, _, _) in &adj[u] {
                if label[v] == u32::MAX {
                    label[v] = s as u32;
                    stack.push(v);
                }
            }
        }
    }
    label
}

/// The routes of many (source, destination) pairs at once, each exactly the path
/// [`shortest_path`] gives, with one breadth-first search per distinct *root* instead of one
/// per pair.
///
/// A pair's root is its source, or, when the source is a leaf (one link), the node at the
/// other end of that link: a search from a leaf `s` pops `s`, then its neighbour `r`, then
/// `r`'s other neighbours in the same order as a search from `r` does (`s` adds nothing to
/// the queue), so every node but `s` gets the same predecessor in both, and a path from `s`
/// is its one link followed by the path from `r`. A dumbbell of 10,000 flows takes two
/// searches instead of 20,000. Searches run one root at a time (pairs grouped by root), so
/// memory stays one predecessor table. `None` where no route exists.
pub fn routes(adj: &Adjacency, pairs: &[(usize, usize)]) -> Vec<Option<Vec<u32>>> {
    let dir = |li: usize, ab: bool| (li * 2 + usize::from(!ab)) as u32;
    let mut out: Vec<Option<Vec<u32>>> = vec![None; pairs.len()];
    // (root, first link direction when the source is a leaf, pair index)
    let mut by_root: Vec<(usize, Option<u32>, usize)> = Vec::with_capacity(pairs.len());
    for (k, &(src, dst)) in pairs.iter().enumerate() {
        match adj[src].as_slice() {
            &[(r, li, ab)] if src != dst => {
                if r == dst {
                    out[k] = Some(vec![dir(li, ab)]);
                } else {
                    by_root.push((r, Some(dir(li, ab)), k));
                }
            }
            _ => by_root.push((src, None, k)),
        }
    }
    by_root.sort_by_key(|&(root, _, k)| (root, k));
    let mut prev: Vec<Option<(u32, u32)>> = vec![None; adj.len()];
    let mut seen = vec![false; adj.len()];
    let mut visited: Vec<usize> = Vec::new();
    let mut q = VecDeque::new();
    let mut i = 0;
    while i < by_root.len() {
        let root = by_root[i].0;
        for &v in &visited {
            seen[v] = false;
            prev[v] = None;
        }
        visited.clear();
        seen[root] = true;
        visited.push(root);
        q.push_back(root);
        while let Some(u) = q.pop_front() {
            for &(v, li, ab) in &adj[u] {
                if !seen[v] {
                    seen[v] = true;
                    visited.push(v);
                    prev[v] = Some((u as u32, dir(li, ab)));
                    q.push_back(v);
                }
            }
        }
        while i < by_root.len() && by_root[i].0 == root {
            let (_, first, k) = by_root[i];
            let dst = pairs[k].1;
            i += 1;
            if !seen[dst] {
                continue;
            }
            let mut path: Vec<u32> = Vec::new();
            let mut v = dst;
            while v != root {
                let (u, d) = prev[v].expect("BFS predecessor");
                path.push(d);
                v = u as usize;
            }
            path.extend(first);
            path.reverse();
            out[k] = Some(path);
        }
    }
    out
}

#[cfg(test)]
mod route_props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `routes` gives exactly `shortest_path`'s paths (ties included) on random graphs
        /// with leaves, parallel links and unconnected parts, and `components` agrees with
        /// reachability.
        #[test]
        fn routes_equal_per_pair_searches(
            n in 2usize..14,
            edges in proptest::collection::vec((0usize..14, 0usize..14), 0..30),
            pairs in proptest::collection::vec((0usize..14, 0usize..14), 1..40),
        ) {
            let mut adj: Adjacency = vec![Vec::new(); n];
            for (li, &(a, b)) in edges.iter().enumerate() {
                let (a, b) = (a % n, b % n);
                if a == b { continue; }
                adj[a].push((b, li, true));
                adj[b].push((a, li, false));
            }
            let pairs: Vec<(usize, usize)> = pairs
                .into_iter()
                .map(|(s, d)| (s % n, d % n))
                .filter(|(s, d)| s != d)
                .collect();
            let got = routes(&adj, &pairs);
            let labels = components(&adj);
            for (k, &(s, d)) in pairs.iter().enumerate() {
                let want = shortest_path(&adj, s, d);
                prop_assert_eq!(want.is_some(), labels[s] == labels[d]);
                prop_assert_eq!(&got[k], &want);
            }
        }
    }
}
