//! Where a value is inside the instance, as a chain on the stack: built into a JSON Pointer only
//! when an error needs it, so that a valid value costs no allocation for its path.

#[derive(Debug, Clone, Copy)]
pub(crate) enum InstancePath<'a> {
    Root,
    Key(&'a InstancePath<'a>, &'a str),
    Index(&'a InstancePath<'a>, usize),
}

impl<'a> InstancePath<'a> {
    pub(crate) fn key(&'a self, key: &'a str) -> InstancePath<'a> {
        InstancePath::Key(self, key)
    }

    pub(crate) fn index(&'a self, index: usize) -> InstancePath<'a> {
        InstancePath::Index(self, index)
    }

    /// The JSON Pointer of this place.
    pub(crate) fn pointer(&self) -> String {
        let mut segments = Vec::new();
        let mut at = self;
        loop {
            match at {
                InstancePath::Root => break,
                InstancePath::Key(parent, key) => {
                    segments.push((*key).to_owned());
                    at = parent;
                }
                InstancePath::Index(parent, index) => {
                    segments.push(index.to_string());
                    at = parent;
                }
            }
        }
        let mut pointer = String::new();
        for segment in segments.iter().rev() {
            push_segment(&mut pointer, segment);
        }
        pointer
    }
}

/// Appends `/segment` to a JSON Pointer, escaped.
pub(crate) fn push_segment(pointer: &mut String, segment: &str) {
    pointer.push('/');
    if !segment.bytes().any(|byte| byte == b'~' || byte == b'/') {
        pointer.push_str(segment);
        return;
    }
    for c in segment.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}
