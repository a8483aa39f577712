//! The tasks running in this process, by id, and how many each owner runs: the quota that keeps
//! one client's flood of tasks from taking the store from the others.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The tasks running here (`T` is what the server keeps of each), with a count per owner. An
/// owner is the key of the client a task counts against (see `client_key`); tasks without
/// one are not counted.
#[derive(Debug)]
pub(crate) struct RunningTasks<T> {
    inner: Mutex<Inner<T>>,
    max_per_owner: usize,
}

#[derive(Debug)]
struct Inner<T> {
    by_id: HashMap<String, (Arc<T>, Option<Arc<str>>)>,
    /// Unfinished tasks per owner, those whose creation is under way included.
    per_owner: HashMap<Arc<str>, usize>,
}

/// A place reserved for one more task of an owner while its record is stored; given back when
/// dropped unfilled (the store failed, or the request went away meanwhile).
#[derive(Debug)]
pub(crate) struct Slot<'a, T> {
    tasks: &'a RunningTasks<T>,
    owner: Option<Arc<str>>,
}

impl<T> RunningTasks<T> {
    pub(crate) fn new(max_per_owner: usize) -> RunningTasks<T> {
        RunningTasks {
            inner: Mutex::new(Inner { by_id: HashMap::new(), per_owner: HashMap::new() }),
            max_per_owner: max_per_owner.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner<T>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The most unfinished tasks one owner may run here.
    pub(crate) fn max_per_owner(&self) -> usize {
        self.max_per_owner
    }

    pub(crate) fn get(&self, task_id: &str) -> Option<Arc<T>> {
        self.lock().by_id.get(task_id).map(|(task, _)| task.clone())
    }

    /// Reserves a place for one more task of `owner`; `None` when it runs as many as it may.
    pub(crate) fn reserve(&self, owner: Option<Arc<str>>) -> Option<Slot<'_, T>> {
        if let Some(owner) = &owner {
            let mut inner = self.lock();
            let running = inner.per_owner.entry(owner.clone()).or_default();
            if *running >= self.max_per_owner {
                return None;
            }
            *running += 1;
        }
        Some(Slot { tasks: self, owner })
    }

    /// Takes the task out (it finished or was stopped); its owner may run another.
    pub(crate) fn remove(&self, task_id: &str) -> Option<Arc<T>> {
        let mut inner = self.lock();
        let (task, owner) = inner.by_id.remove(task_id)?;
        if let Some(owner) = owner {
            inner.release(&owner);
        }
        Some(task)
    }
}

impl<T> Inner<T> {
    fn release(&mut self, owner: &Arc<str>) {
        if let Some(running) = self.per_owner.get_mut(owner) {
            *running -= 1;
            if *running == 0 {
                self.per_owner.remove(owner);
            }
        }
    }
}

impl<T> Slot<'_, T> {
    /// The task now runs, under `task_id`: the place is its own until it is removed.
    pub(crate) fn fill(mut self, task_id: String, task: Arc<T>) {
        let owner = self.owner.take();
        self.tasks.lock().by_id.insert(task_id, (task, owner));
    }
}

impl<T> Drop for Slot<'_, T> {
    fn drop(&mut self) {
        if let Some(owner) = self.owner.take() {
            self.tasks.lock().release(&owner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_runs_at_most_its_quota_and_unfilled_places_come_back() {
        let tasks = RunningTasks::<()>::new(2);
        let alice = || Some(Arc::<str>::from("address:127.0.0.1"));
        tasks.reserve(alice()).unwrap().fill("a1".to_owned(), Arc::new(()));
        let second = tasks.reserve(alice()).unwrap();
        assert!(tasks.reserve(alice()).is_none(), "two running or reserved");
        assert!(tasks.reserve(Some("address:127.0.0.2".into())).is_some(), "another owner has its own quota");
        assert!(tasks.reserve(None).is_some(), "tasks without an owner are not counted");
        drop(second);
        tasks.reserve(alice()).unwrap().fill("a2".to_owned(), Arc::new(()));
        assert!(tasks.reserve(alice()).is_none());
        assert!(tasks.remove("a1").is_some());
        assert!(tasks.reserve(alice()).is_some(), "a finished task makes room");
        assert!(tasks.get("a2").is_some() && tasks.get("a1").is_none());
    }
}
