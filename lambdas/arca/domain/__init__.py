"""Pure domain: names, version encoding, canary choice, errors, models. No boto3, no os.environ."""
