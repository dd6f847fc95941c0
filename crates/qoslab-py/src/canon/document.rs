//! The walk that writes the [`Tree`] as toml's document writer does: a table's scalars and
//! inline arrays under its header, then its sub-tables and arrays of tables, depth first.

use super::tree::{Piece, Span, Tree};

/// Writes the tree as toml's document writer does.
pub(super) struct Writer<'a> {
    pub(super) tree: &'a Tree,
    pub(super) out: String,
    /// The dotted key of the table being written.
    pub(super) path: Vec<&'a str>,
    pub(super) first: bool,
}

impl<'a> Writer<'a> {
    /// The table of `entries`: its header (`None` for the root, else whether it is an element
    /// of an array of tables) and its values, then its sub-tables. toml leaves out the root
    /// when it has no values, and a table's header when the table has sub-tables but no values.
    pub(super) fn table(&mut self, entries: Span, header: Option<bool>) {
        let tree = self.tree;
        let entries = &tree.entries[entries.range()];
        let values = entries.iter().any(|e| !e.piece.is_table());
        let children = entries.iter().any(|e| e.piece.is_table());
        let shown = match header {
            None => values,
            Some(array) => array || values || !children,
        };
        if shown {
            if !self.first {
                self.out.push('\n');
            }
            self.first = false;
            if let Some(array) = header {
                self.out.push_str(if array { "[[" } else { "[" });
                for (i, k) in self.path.iter().enumerate() {
                    if i > 0 {
                        self.out.push('.');
                    }
                    self.out.push_str(k);
                }
                self.out.push_str(if array { "]]\n" } else { "]\n" });
            }
            for e in entries.iter().filter(|e| !e.piece.is_table()) {
                self.out.push_str(tree.key_text(e.key));
                self.out.push_str(" = ");
                self.value(e.piece);
                self.out.push('\n');
            }
        }
        for e in entries {
            match e.piece {
                Piece::Table(sub) => {
                    self.path.push(tree.key_text(e.key));
                    self.table(sub, Some(false));
                    self.path.pop();
                }
                Piece::Tables(subs) => {
                    self.path.push(tree.key_text(e.key));
                    for sub in &tree.items[subs.range()] {
                        if let Piece::Table(sub) = *sub {
                            self.table(sub, Some(true));
                        }
                    }
                    self.path.pop();
                }
                Piece::Scalar(_) | Piece::Array(_) => {}
            }
        }
    }

    /// A scalar or an inline array (`[a, b]`).
    fn value(&mut self, p: Piece) {
        let tree = self.tree;
        match p {
            Piece::Scalar(text) => self.out.push_str(&tree.text[text.range()]),
            Piece::Array(items) => {
                self.out.push('[');
                for (i, &x) in tree.items[items.range()].iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.value(x);
                }
                self.out.push(']');
            }
            Piece::Table(_) | Piece::Tables(_) => unreachable!("tables are not inline values"),
        }
    }
}
