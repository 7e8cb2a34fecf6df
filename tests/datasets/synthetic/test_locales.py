"""The documented locale tables of the synthetic generator."""

from __future__ import annotations

from faker import Faker
from faker.config import AVAILABLE_LOCALES

from confidence.datasets.synthetic.locales import FAKER_LOCALES, LANGUAGES, NAME_LOCALES


def test_every_language_has_faker_locales_faker_ships():
    assert set(FAKER_LOCALES) == set(LANGUAGES)
    assert all(loc in AVAILABLE_LOCALES for locs in FAKER_LOCALES.values() for loc in locs)


def test_the_name_locales_are_faker_locales_beyond_the_printed_languages():
    printed = {loc for locs in FAKER_LOCALES.values() for loc in locs}
    assert len(NAME_LOCALES) == len(set(NAME_LOCALES)) >= 10
    assert not set(NAME_LOCALES) & printed
    for loc in NAME_LOCALES:
        assert loc in AVAILABLE_LOCALES, loc
        fake = Faker(loc)
        fake.seed_instance(0)
        assert fake.company().strip() and fake.name().strip() and fake.address().strip(), loc
