"""What tells a training loader from a validation one, word by word."""

from __future__ import annotations

import libcst as cst
import pytest

from torchport.distribute.loader_roles import TRAIN, VALIDATION, role_of_dataset, role_of_use, role_of_words


@pytest.mark.parametrize("name, role", [
    ("train_loader", TRAIN), ("trainloader", TRAIN), ("loader_train", TRAIN), ("trainval_loader", TRAIN),
    ("pretrain_dl", TRAIN), ("TrainLoader", TRAIN), ("mtrain_loader", TRAIN),
    ("val_loader", VALIDATION), ("valid_loader", VALIDATION), ("validation_loader", VALIDATION),
    ("testloader", VALIDATION), ("loader_test", VALIDATION), ("eval_dataloader", VALIDATION),
    ("dev_loader", VALIDATION), ("query_loader", VALIDATION), ("valLoader", VALIDATION),
    ("loader", ""), ("dataloader", ""), ("device_loader", ""), ("value_loader", ""), ("dl", ""),
])
def test_the_words_of_a_name_say_its_split(name, role):
    assert role_of_words(name) == role


@pytest.mark.parametrize("dataset, role", [
    ("datasets.MNIST(root, train=True, download=True)", TRAIN),
    ("datasets.CIFAR10(root='./data', train=False, transform=transform_test)", VALIDATION),
    ("VOCSegmentation(root, image_set='val')", VALIDATION),
    ("load_dataset('glue', split='train')", TRAIN),
    ("datasets.ImageFolder(os.path.join(args.data, 'train'), transform)", TRAIN),
    ("datasets.ImageFolder(valdir, val_transforms)", VALIDATION),
    # the keyword decides before the names around it do
    ("datasets.MNIST(train_root, train=False)", VALIDATION),
    ("TensorDataset(x, y)", ""),
])
def test_what_a_dataset_says_of_its_split(dataset, role):
    assert role_of_dataset(cst.parse_expression(dataset)) == role


@pytest.mark.parametrize("code, role", [
    ("for x, y in loader:\n    loss(x, y).backward()\n", TRAIN),
    ("for i, (x, y) in enumerate(loader):\n    optimizer.step()\n", TRAIN),
    ("with torch.no_grad():\n    for x in loader:\n        acc(x)\n", VALIDATION),
    ("def evaluate(model):\n    for x in loader:\n        acc(x)\n", VALIDATION),
    ("train(model, loader, optimizer)\n", TRAIN),
    ("validate(model, loader)\n", VALIDATION),
    ("for x in loader:\n    print(x)\n", ""),
    ("train(model, loader)\nevaluate(model, loader)\n", ""),
])
def test_how_the_script_uses_a_loader_says_its_split(code, role):
    assert role_of_use(cst.parse_module(code), "loader") == role
