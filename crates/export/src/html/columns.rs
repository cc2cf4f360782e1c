//! The building blocks of the page's data: the table every string goes into once
//! ([`Strings`]: the other tables refer to a name by its index) and a JSON column.

use std::collections::HashMap;

use serde_json::Value;

/// Every string once.
#[derive(Default)]
pub(super) struct Strings {
    pub(super) list: Vec<String>,
    index: HashMap<String, u32>,
}

impl Strings {
    pub(super) fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(s.to_owned());
        self.index.insert(s.to_owned(), i);
        i
    }
}

pub(super) fn column<T: Into<Value>>(values: impl Iterator<Item = T>) -> Value {
    Value::Array(values.map(Into::into).collect())
}
