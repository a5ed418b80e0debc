// Source: npm @docusaurus/theme-classic@3.10.2, file src/theme/SkipToContent/index.tsx; licence MIT (see LICENSES/docusaurus-theme-classic.txt)
/**
 * Copyright (c) Facebook, Inc. and its affiliates.
 *
 * This source code is licensed under the MIT license found in the
 * LICENSE file in the root directory of this source tree.
 */

import React, {type ReactNode} from 'react';
import {SkipToContentLink} from '@docusaurus/theme-common';
import styles from './styles.module.css';

export default function SkipToContent(): ReactNode {
  return <SkipToContentLink className={styles.skipToContent} />;
}
