"""The deployment read from the environment, and each setting tried before anything runs."""

from __future__ import annotations

import pytest

from insight_assets.core.deployment import (
    DASK_SCHEDULER_ENV,
    DATA_PATH_ENV,
    LANCEDB_URI_ENV,
    POSTGRES_URL_ENV,
    Deployment,
    DeploymentError,
    check_dask_scheduler,
    redacted,
)
from insight_assets_tests.servers import free_port


def test_nothing_set_is_everything_on_this_machine():
    deployment = Deployment.from_environment({})
    assert deployment == Deployment()
    assert deployment.lake_data_path == "data/lake" and deployment.vectors_uri == "data/lancedb"
    assert deployment.describe()[0].endswith("SQLite under DAGSTER_HOME")
    deployment.check()  # nothing to try


def test_the_variables_select_the_shared_engines_and_no_password_is_shown():
    deployment = Deployment.from_environment(
        {
            POSTGRES_URL_ENV: " postgres://lab:hunter2@db.lab:5432/insight ",
            DATA_PATH_ENV: "/shared/lake",
            LANCEDB_URI_ENV: "s3://bucket/vectors",
            DASK_SCHEDULER_ENV: "tcp://scheduler:8786",
        }
    )
    # libpq reads either scheme; SQLAlchemy (the Dagster instance) only postgresql://.
    assert deployment.postgres_url == "postgresql://lab:hunter2@db.lab:5432/insight"
    assert (deployment.lake_data_path, deployment.vectors_uri) == ("/shared/lake", "s3://bucket/vectors")
    described = "\n".join(deployment.describe())
    assert "hunter2" not in described and "lab:***@db.lab:5432/insight" in described
    assert "tcp://scheduler:8786" in described
    assert redacted("postgresql://lab@db/x") == "postgresql://lab@db/x"


def test_an_unreachable_postgres_is_one_sentence_naming_the_variable():
    url = f"postgresql://lab:hunter2@127.0.0.1:{free_port()}/insight"
    with pytest.raises(DeploymentError) as raised:
        Deployment(postgres_url=url).check()
    message = str(raised.value)
    assert message.startswith(f"{POSTGRES_URL_ENV}=postgresql://lab:***@127.0.0.1")
    assert "cannot connect to PostgreSQL" in message and "hunter2" not in message


def test_a_data_path_or_vectors_folder_that_cannot_be_written_names_its_variable(tmp_path):
    (tmp_path / "a-file").write_text("")
    blocked = str(tmp_path / "a-file" / "below")
    with pytest.raises(DeploymentError, match=f"^{LANCEDB_URI_ENV}=.*cannot write there"):
        Deployment(lancedb_uri=blocked).check()
    # An object store's URI is the store's to check.
    Deployment(lancedb_uri="s3://bucket/vectors").check()
    Deployment(lancedb_uri=str(tmp_path / "vectors")).check()
    assert (tmp_path / "vectors").is_dir() and not list((tmp_path / "vectors").iterdir())


def test_a_dask_scheduler_that_does_not_answer_names_the_variable():
    address = f"tcp://127.0.0.1:{free_port()}"
    with pytest.raises(DeploymentError, match=f"^{DASK_SCHEDULER_ENV}={address}: no Dask scheduler answered"):
        check_dask_scheduler(address, DASK_SCHEDULER_ENV, timeout_s=1)
