//! What can be wrong with a folder: every problem found, each naming its file.

/// A folder that cannot be served as it is: every problem found, each naming its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderError {
    problems: Vec<String>,
}

impl FolderError {
    pub(crate) fn new(problems: Vec<String>) -> FolderError {
        FolderError { problems }
    }

    pub(crate) fn one(problem: impl Into<String>) -> FolderError {
        FolderError { problems: vec![problem.into()] }
    }

    /// Each problem, with the file it is in.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl std::fmt::Display for FolderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.problems.join("; "))
    }
}

impl std::error::Error for FolderError {}
