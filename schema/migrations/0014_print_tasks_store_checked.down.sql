BEGIN;

ALTER TABLE print_tasks ADD CONSTRAINT print_tasks_store_id_fkey FOREIGN KEY (store_id) REFERENCES stores (store_id);

COMMIT;
